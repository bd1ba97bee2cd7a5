import type { EntityManager } from '@mikro-orm/postgresql';
import { Account } from '../accounts/entities.ts';
import type { Authenticator } from '../http/route.ts';
import type { Config } from '../config.ts';
import type { Orm } from '../persistence/orm.ts';
import { DomainError, notFound, refusals, validationError } from '../shared/errors.ts';
import { z } from '../shared/zod.ts';
import type { CredentialCache } from './credential-cache.ts';
import { authenticateApiKey, type ApiKeyPrincipal } from './service.ts';

export interface IntegrationAuth {
  principal: ApiKeyPrincipal;
  em: EntityManager;
}

/** `Authorization: Bearer <API_KEY>` on `{api_url}`; every failure is 401. */
export function apiKeyAuthenticator({ config, orm, credentials }: { config: Pick<Config, 'KEY_PEPPER'>; orm: Orm; credentials: CredentialCache }): Authenticator<IntegrationAuth> {
  return {
    security: 'apiKey',
    raises: refusals(authenticateApiKey),
    async authenticate(req) {
      const header = req.headers.authorization;
      const raw = header && /^Bearer \S+$/.test(header) ? header.slice('Bearer '.length) : undefined;
      const em = orm.em.fork();
      return { principal: await authenticateApiKey(em, credentials, config.KEY_PEPPER, raw), em };
    },
  };
}

/** A Pix account the key reaches; any other id is 403 whether or not it exists (nothing leaks across tenants). */
export async function scopedAccount(auth: IntegrationAuth, pixAccountId: string): Promise<Account> {
  if (!auth.principal.pixAccountIds.includes(pixAccountId)) {
    throw new DomainError('ACCOUNT_NOT_IN_KEY_SCOPE');
  }
  const account = await auth.em.findOne(Account, { pixAccountId, tenantId: auth.principal.tenantId, kind: 'HOLDER' });
  if (!account) throw notFound('Pix account');
  return account;
}
scopedAccount.raises = refusals('ACCOUNT_NOT_IN_KEY_SCOPE', 'NOT_FOUND');

/** The header that names the Pix account a call acts for (`actingAccount`). */
export const pixAccountHeader = z.object({
  'x-pix-account-id': z.string().min(1).max(64).optional().openapi({ description: 'Selects the account when the key reaches several' }),
});

/** The Pix account a call acts for: `X-Pix-Account-Id` when given, else the key's only account. */
function actingPixAccountId(auth: IntegrationAuth, pixAccountIdHeader: string | undefined): string {
  if (pixAccountIdHeader) return pixAccountIdHeader;
  if (auth.principal.pixAccountIds.length === 1) return auth.principal.pixAccountIds[0]!;
  throw validationError('This API key reaches several Pix accounts: name one in X-Pix-Account-Id', [
    { path: 'headers.x-pix-account-id', message: 'required when the key reaches several Pix accounts' },
  ]);
}

/** The account a call acts for (see `actingPixAccountId`). */
export async function actingAccount(auth: IntegrationAuth, pixAccountIdHeader: string | undefined): Promise<Account> {
  return scopedAccount(auth, actingPixAccountId(auth, pixAccountIdHeader));
}
actingAccount.raises = refusals(scopedAccount);

/** A Pix account's id never changes: kept in process, bounded. */
const accountIdByPixAccount = new Map<string, string>();
const ACCOUNT_IDS_KEPT = 100_000;

/**
 * Only the id of the account a call acts for, for paths that check the account's state themselves in their own
 * statement (the TEV settlement): no row is read after the first time.
 */
export async function actingAccountId(auth: IntegrationAuth, pixAccountIdHeader: string | undefined): Promise<string> {
  const pixAccountId = actingPixAccountId(auth, pixAccountIdHeader);
  const key = `${auth.principal.tenantId}:${pixAccountId}`;
  const known = accountIdByPixAccount.get(key);
  if (known && auth.principal.pixAccountIds.includes(pixAccountId)) return known;
  const account = await scopedAccount(auth, pixAccountId);
  if (accountIdByPixAccount.size >= ACCOUNT_IDS_KEPT) accountIdByPixAccount.delete(accountIdByPixAccount.keys().next().value!);
  accountIdByPixAccount.set(key, account.id);
  return account.id;
}
actingAccountId.raises = refusals(scopedAccount);
