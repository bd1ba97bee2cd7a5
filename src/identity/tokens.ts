import jwt from 'jsonwebtoken';
import type { Config } from '../config.ts';
import type { HolderType } from '../shared/documents.ts';
import { refusals, unauthorized } from '../shared/errors.ts';
import { looksLikeCuid } from '../shared/ids.ts';
import { secretKeyOf } from '../shared/secret-key.ts';
import { z } from '../shared/zod.ts';

/**
 * Holder JWT: `type`, `iat`, `exp` as the interface says; `sub` holder, `tid` tenant, `kid` the tenant key of client
 * tokens. Each claim is required in the shape the platform issues it (a missing `exp` is not "never expires").
 */
const IssuedClaims = z.object({
  sub: z.uuid(),
  tid: z.uuid(),
  type: z.enum(['PERSON', 'COMPANY']),
  kid: z.string().refine(looksLikeCuid).optional(),
  iat: z.int(),
  exp: z.int(),
});
export type HolderClaims = z.infer<typeof IssuedClaims>;

/** Tokens come only from this platform's servers: an issue time further ahead of this clock is not one of ours. */
const CLOCK_SKEW_SECONDS = 5;

const lifetimeSeconds = (config: Config, tenantKeyId: string | undefined) => (tenantKeyId ? config.CLIENT_JWT_TTL_SECONDS : config.JWT_TTL_SECONDS);

export function issueHolderToken(config: Config, holder: { id: string; tenantId: string; type: HolderType }, tenantKeyId?: string): string {
  const payload = { sub: holder.id, tid: holder.tenantId, type: holder.type, ...(tenantKeyId ? { kid: tenantKeyId } : {}) };
  return jwt.sign(payload, secretKeyOf(config.JWT_SECRET), { algorithm: 'HS256', expiresIn: lifetimeSeconds(config, tenantKeyId) });
}

/**
 * A valid signature is not enough: the claims must have the shape the platform issues, a lifetime no longer than it
 * gives its tokens, and an issue time that is not in the future, so a token minted outside `issueHolderToken` (a
 * leaked secret, a tool sharing it) can neither live forever nor reach the database with ids it never issues. Every
 * failure is 401.
 */
export function verifyHolderToken(config: Config, token: string): HolderClaims {
  const verified = verifiedTokens.get(token);
  if (verified && verified.secret === config.JWT_SECRET) {
    if (verified.claims.exp > Math.floor(Date.now() / 1000)) return verified.claims;
    verifiedTokens.delete(token);
    throw unauthorized('TOKEN_EXPIRED');
  }
  const claims = verifyHolderTokenNow(config, token);
  rememberVerified(token, { secret: config.JWT_SECRET, claims: Object.freeze(claims) });
  return claims;
}
verifyHolderToken.raises = refusals('UNAUTHORIZED');

/**
 * Tokens this process verified, with their claims: a client uses its token for many requests, and verifying it again
 * (base64, two JSON parses, the HMAC and the claims' schema) was 5% of the api's CPU on the Pix payment path. Only a
 * token that passed every check is kept, and its expiry is checked again at every use. Bounded: past the limit the
 * oldest entries go, and a token that went is verified again.
 */
const verifiedTokens = new Map<string, { secret: string; claims: HolderClaims }>();
const VERIFIED_TOKENS_MAX = 10_000;

function rememberVerified(token: string, entry: { secret: string; claims: HolderClaims }): void {
  if (verifiedTokens.size >= VERIFIED_TOKENS_MAX) verifiedTokens.delete(verifiedTokens.keys().next().value!);
  verifiedTokens.set(token, entry);
}

function verifyHolderTokenNow(config: Config, token: string): HolderClaims {
  let payload: unknown;
  try {
    payload = jwt.verify(token, secretKeyOf(config.JWT_SECRET), { algorithms: ['HS256'] });
  } catch (err) {
    throw unauthorized(err instanceof jwt.TokenExpiredError ? 'TOKEN_EXPIRED' : 'TOKEN_INVALID');
  }
  const parsed = IssuedClaims.safeParse(payload);
  const now = Math.floor(Date.now() / 1000);
  if (
    !parsed.success ||
    parsed.data.iat > now + CLOCK_SKEW_SECONDS ||
    parsed.data.exp <= parsed.data.iat ||
    parsed.data.exp - parsed.data.iat > lifetimeSeconds(config, parsed.data.kid)
  ) {
    throw unauthorized('TOKEN_INVALID');
  }
  return parsed.data;
}
