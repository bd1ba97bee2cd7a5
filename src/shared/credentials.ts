import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * Machine credentials are `<kind>_<prefix>.<secret>`: the prefix finds the row, the secret is stored only as an
 * HMAC-SHA256 keyed with the server's pepper (the secret is 256 random bits, so a slow hash adds nothing but latency),
 * and is compared in constant time.
 */
export type CredentialKind = 'tnk' | 'pak';

const PREFIX_LENGTH = 12;
const ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';

export interface IssuedCredential {
  key: string;
  prefix: string;
  secretHash: string;
}

function randomPrefix(): string {
  const bytes = randomBytes(PREFIX_LENGTH);
  return Array.from(bytes, (b) => ALPHABET[b % ALPHABET.length]).join('');
}

export function hashSecret(secret: string, pepper: string): string {
  return createHmac('sha256', pepper).update(secret).digest('hex');
}

export function issueCredential(kind: CredentialKind, pepper: string): IssuedCredential {
  const prefix = randomPrefix();
  const secret = randomBytes(32).toString('base64url');
  return { key: `${kind}_${prefix}.${secret}`, prefix, secretHash: hashSecret(secret, pepper) };
}

export function parseCredential(kind: CredentialKind, raw: string): { prefix: string; secret: string } | null {
  const match = new RegExp(`^${kind}_([a-z0-9]{${PREFIX_LENGTH}})\\.([A-Za-z0-9_-]{43})$`).exec(raw);
  return match ? { prefix: match[1]!, secret: match[2]! } : null;
}

export function secretMatches(secret: string, storedHash: string, pepper: string): boolean {
  const given = Buffer.from(hashSecret(secret, pepper), 'hex');
  const stored = Buffer.from(storedHash, 'hex');
  return given.length === stored.length && timingSafeEqual(given, stored);
}
