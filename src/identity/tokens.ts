import jwt from 'jsonwebtoken';
import type { Config } from '../config.ts';
import type { HolderType } from '../shared/documents.ts';
import { unauthorized } from '../shared/errors.ts';

/** Holder JWT: `type`, `iat`, `exp` as the interface says; `sub` holder, `tid` tenant, `kid` the tenant key of client tokens. */
export interface HolderClaims {
  sub: string;
  tid: string;
  type: HolderType;
  kid?: string;
  iat: number;
  exp: number;
}

export function issueHolderToken(config: Config, holder: { id: string; tenantId: string; type: HolderType }, tenantKeyId?: string): string {
  const payload = { sub: holder.id, tid: holder.tenantId, type: holder.type, ...(tenantKeyId ? { kid: tenantKeyId } : {}) };
  return jwt.sign(payload, config.JWT_SECRET, {
    algorithm: 'HS256',
    expiresIn: tenantKeyId ? config.CLIENT_JWT_TTL_SECONDS : config.JWT_TTL_SECONDS,
  });
}

export function verifyHolderToken(config: Config, token: string): HolderClaims {
  try {
    const claims = jwt.verify(token, config.JWT_SECRET, { algorithms: ['HS256'] });
    if (typeof claims === 'string' || !claims.sub || !claims.tid || (claims.type !== 'PERSON' && claims.type !== 'COMPANY')) throw new Error('claims');
    return claims as HolderClaims;
  } catch (err) {
    throw unauthorized(err instanceof jwt.TokenExpiredError ? 'Token expired; authenticate again' : 'Invalid token; authenticate again');
  }
}
