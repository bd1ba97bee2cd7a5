import { timingSafeEqual } from 'node:crypto';
import { DomainError, refusals } from '../shared/errors.ts';
import { signWithKey } from '../webhooks/signature.ts';

/** How far a notification's timestamp may be from the platform's clock, either way (Standard Webhooks' tolerance). */
export const REPLAY_WINDOW_SECONDS = 300;

const invalid = (why: string) => new DomainError('INVALID_SIGNATURE', { why });

/**
 * Standard Webhooks verification of a Pix provider's notification: one of the `v1,<base64>` signatures in
 * `webhook-signature` (space-separated, so the provider can roll its secret) must be the HMAC-SHA256 of
 * `<webhook-id>.<webhook-timestamp>.<raw body>` keyed with the secret's decoded bytes (`whsec_<base64>`), and the
 * timestamp must be within the replay window. Compared in constant time.
 */
export function verifyProviderSignature(secret: string, message: { id: string; timestamp: number; signatures: string | undefined; raw: Buffer }, nowSeconds: number): void {
  if (!message.signatures) throw invalid('webhook-signature is missing');
  if (Math.abs(nowSeconds - message.timestamp) > REPLAY_WINDOW_SECONDS) throw invalid(`webhook-timestamp is more than ${REPLAY_WINDOW_SECONDS} seconds away from now`);
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
  const expected = Buffer.from(signWithKey(key, message.id, message.timestamp, message.raw));
  const matches = message.signatures.split(' ').some((given) => {
    const candidate = Buffer.from(given);
    return candidate.length === expected.length && timingSafeEqual(candidate, expected);
  });
  if (!matches) throw invalid('no webhook-signature matches the body');
}
verifyProviderSignature.raises = refusals('INVALID_SIGNATURE');
