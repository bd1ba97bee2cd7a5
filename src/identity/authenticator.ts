import type { EntityManager } from '@mikro-orm/postgresql';
import type { Authenticator } from '../http/route.ts';
import type { PlatformContext } from '../platform-context.ts';
import { refusals, unauthorized } from '../shared/errors.ts';
import { activeTenantKey } from '../tenants/service.ts';
import type { Holder } from './entities.ts';
import { findTenantHolder } from './holder-store.ts';
import { assertNotBlocked } from './service.ts';
import { verifyHolderToken, type HolderClaims } from './tokens.ts';

export interface HolderAuth {
  holder: Holder;
  claims: HolderClaims;
  /** A client token (from a tenant API key) of a PIN-exempt tenant may write without the PIN. */
  pinExempt: boolean;
  /** The request's unit of work. */
  em: EntityManager;
}

/**
 * `Authorization: Bearer <JWT>` on `{base_url}`: a valid signature, claims and lifetime, the tenant of `X-Tenant-Id`,
 * a live tenant key for client tokens (revocation is immediate), and a holder of the token's type that is not blocked.
 * Every failure is 401.
 */
export function holderAuthenticator({ config, orm, credentials }: PlatformContext): Authenticator<HolderAuth> {
  return {
    security: 'holderJwt',
    raises: refusals(verifyHolderToken, assertNotBlocked),
    async authenticate(req, headers) {
      const header = req.headers.authorization;
      if (!header || !/^Bearer \S+$/.test(header)) throw unauthorized('BEARER_MISSING');
      const claims = verifyHolderToken(config, header.slice('Bearer '.length));
      if (claims.tid !== headers['x-tenant-id']) throw unauthorized('TOKEN_OF_ANOTHER_TENANT');
      const em = orm.em.fork();
      const tenantKey = claims.kid ? await activeTenantKey(em, credentials, claims.tid, claims.kid) : null;
      if (claims.kid && !tenantKey) throw unauthorized('ISSUING_KEY_REVOKED');
      const holder = await findTenantHolder(em, claims.sub, claims.tid);
      if (!holder || holder.type !== claims.type) throw unauthorized('HOLDER_UNKNOWN');
      assertNotBlocked(holder);
      return { holder, claims, pinExempt: Boolean(tenantKey?.pinExempt), em };
    },
  };
}
