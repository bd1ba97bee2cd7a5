import type { EntityManager } from '@mikro-orm/postgresql';
import type { Authenticator } from '../http/route.ts';
import type { PlatformContext } from '../platform-context.ts';
import { refusals, unauthorized } from '../shared/errors.ts';
import type { CredentialCache } from '../tenants/credential-cache.ts';
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
  /** What this api keeps of the holder between requests, forgotten as soon as the holder changes (`payingAccount`). */
  kept: Pick<CredentialCache, 'getPart'>;
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
      // Kept between requests until the database announces a change of the holder (src/identity/sql/holder_standing.sql):
      // read on every request, it was a third of a Pix payment's statements. Frozen: every request shares it.
      const holder = await credentials.get(`hld:${claims.sub}`, async () => freeze(await findTenantHolder(em, claims.sub, claims.tid)), { keepNull: false });
      if (!holder || holder.tenantId !== claims.tid || holder.type !== claims.type) throw unauthorized('HOLDER_UNKNOWN');
      assertNotBlocked(holder);
      return { holder, claims, pinExempt: Boolean(tenantKey?.pinExempt), em, kept: credentials };
    },
  };
}

const freeze = <T>(value: T): T => (value === null ? value : Object.freeze(value));
