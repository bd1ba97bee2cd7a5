import type { EntityManager } from '@mikro-orm/postgresql';
import { Account } from '../accounts/entities.ts';
import type { Authenticator } from '../http/route.ts';
import type { Services } from '../services.ts';
import { AppError, notFound } from '../shared/errors.ts';
import { authenticateApiKey, type ApiKeyPrincipal } from './service.ts';

export interface IntegrationAuth {
  principal: ApiKeyPrincipal;
  em: EntityManager;
}

/** `Authorization: Bearer <API_KEY>` on `{api_url}`; every failure is 401. */
export function apiKeyAuthenticator({ config, orm }: Services): Authenticator<IntegrationAuth> {
  return {
    security: 'apiKey',
    async authenticate(req) {
      const header = req.headers.authorization;
      const raw = header && /^Bearer \S+$/.test(header) ? header.slice('Bearer '.length) : undefined;
      const em = orm.em.fork();
      return { principal: await authenticateApiKey(em, config.KEY_PEPPER, raw), em };
    },
  };
}

/** A Pix account the key reaches; any other id is 403 whether or not it exists (nothing leaks across tenants). */
export async function scopedAccount(auth: IntegrationAuth, pixAccountId: string): Promise<Account> {
  if (!auth.principal.pixAccountIds.includes(pixAccountId)) {
    throw new AppError(403, 'ACCOUNT_NOT_IN_KEY_SCOPE', 'This API key does not reach that Pix account');
  }
  const account = await auth.em.findOne(Account, { pixAccountId, tenantId: auth.principal.tenantId, kind: 'HOLDER' });
  if (!account) throw notFound('Pix account');
  return account;
}

/** The account a call acts for: `X-Pix-Account-Id` when given, else the key's only account. */
export async function actingAccount(auth: IntegrationAuth, pixAccountIdHeader: string | undefined): Promise<Account> {
  if (pixAccountIdHeader) return scopedAccount(auth, pixAccountIdHeader);
  if (auth.principal.pixAccountIds.length === 1) return scopedAccount(auth, auth.principal.pixAccountIds[0]!);
  throw new AppError(400, 'VALIDATION_ERROR', 'This API key reaches several Pix accounts: name one in X-Pix-Account-Id', [
    { path: 'headers.x-pix-account-id', message: 'required when the key reaches several Pix accounts' },
  ]);
}
