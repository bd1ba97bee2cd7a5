import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import type { Router } from 'express';
import { z } from '../shared/zod.ts';
import { accountViews, holderAccounts, getOwnAccount, setMonthlyGoal } from '../accounts/service.ts';
import { accountIdParams, tenantHeaders } from '../http/common-schemas.ts';
import { defineRoute, type Authenticator } from '../http/route.ts';
import type { Services } from '../services.ts';
import type { HolderType } from '../shared/documents.ts';
import { reaisLimitSchema } from '../shared/money.ts';
import type { HolderAuth } from './authenticator.ts';
import type { Holder } from './entities.ts';
import { dispatchHandOff } from '../handoff/dispatch.ts';
import { changePin, createPin } from './pin.ts';
import {
  AccountSummary,
  AuthenticationResult,
  ChangePin,
  ClientLogin,
  CompanyRegistration,
  CreatePin,
  HolderEntity,
  Message,
  PasswordLogin,
  PersonRegistration,
} from './schemas.ts';
import { authenticateClient, authenticateWithPassword, registerHolder } from './service.ts';
import { issueHolderToken } from './tokens.ts';
import { holderView } from './views.ts';

export function registerIdentityRoutes(router: Router, registry: OpenAPIRegistry, services: Services, auth: Authenticator<HolderAuth>): void {
  const { config, orm, temporal } = services;

  async function authenticationResult(holder: Holder, token: string) {
    const em = orm.em.fork();
    return { token, entityType: holder.type, entity: holderView(config, holder), accounts: await accountViews(em, await holderAccounts(em, holder.id)) };
  }

  const registration = (type: HolderType, path: '/persons' | '/companies', body: typeof PersonRegistration, key: 'person' | 'company') =>
    defineRoute(router, registry, {
      method: 'post',
      path,
      tags: ['Registration'],
      summary: type === 'PERSON' ? 'Register a person (CPF)' : 'Register a company (CNPJ)',
      description: 'Public. Creates the holder (status PENDING) and starts its KYC onboarding; the token works at once, operations wait for KYC.',
      headers: tenantHeaders,
      body,
      responses: {
        201: { description: 'Registered', schema: z.object({ [key]: HolderEntity, token: z.string() }) },
        409: { description: 'E-mail or document already registered in this tenant (EMAIL_TAKEN, DOCUMENT_TAKEN)' },
      },
      async handler({ headers, body: input }) {
        const em = orm.em.fork();
        const { holder, handOff } = await registerHolder(em, config, headers['x-tenant-id'], type, input);
        await dispatchHandOff(temporal.client, em, handOff);
        return { status: 201, body: { [key]: holderView(config, holder), token: issueHolderToken(config, holder) } };
      },
    });
  registration('PERSON', '/persons', PersonRegistration, 'person');
  registration('COMPANY', '/companies', CompanyRegistration, 'company');

  defineRoute(router, registry, {
    method: 'post',
    path: '/authenticate',
    tags: ['Authentication'],
    summary: 'Authenticate a holder with document and password',
    description:
      'Token valid 1 hour. Wrong password and unknown document answer the same 401; repeated failures are limited (429) per document and per tenant and client address.',
    headers: tenantHeaders,
    body: PasswordLogin,
    responses: {
      200: { description: 'Authenticated', schema: AuthenticationResult },
      400: { description: 'VALIDATION_ERROR, or UNKNOWN_TENANT when X-Tenant-Id names no tenant' },
      401: { description: 'INVALID_CREDENTIALS, or HOLDER_BLOCKED ("Conta bloqueada. Procure o suporte.")' },
      429: { description: 'RATE_LIMITED' },
    },
    async handler({ headers, body, req }) {
      const { holder, token } = await authenticateWithPassword(orm.em.fork(), config, {
        tenantId: headers['x-tenant-id'],
        document: body.document,
        password: body.password,
        clientAddress: req.ip ?? 'unknown',
      });
      return { status: 200, body: await authenticationResult(holder, token) };
    },
  });

  defineRoute(router, registry, {
    method: 'post',
    path: '/authenticate/clients',
    tags: ['Authentication'],
    summary: 'Exchange the tenant API key for a 24-hour token of one holder (server to server)',
    description: 'Send the key in X-Tenant-Api-Key (tnk_<prefix>.<secret>). Revoking the key ends every token it issued at once.',
    headers: tenantHeaders.extend({ 'x-tenant-api-key': z.string().optional().openapi({ description: 'tnk_<prefix>.<secret>' }) }),
    body: ClientLogin,
    responses: {
      200: { description: 'Authenticated', schema: AuthenticationResult },
      401: { description: 'Key missing, invalid, revoked or of another tenant; UNKNOWN_HOLDER; HOLDER_BLOCKED' },
      429: { description: 'RATE_LIMITED: failed keys per tenant and client address, or calls per key and minute' },
    },
    async handler({ headers, body, req }) {
      const { holder, token } = await authenticateClient(orm.em.fork(), config, {
        tenantId: headers['x-tenant-id'],
        rawKey: headers['x-tenant-api-key'],
        document: body.document,
        clientAddress: req.ip ?? 'unknown',
      });
      return { status: 200, body: await authenticationResult(holder, token) };
    },
  });

  defineRoute(router, registry, {
    method: 'post',
    path: '/passwords/create-pin',
    tags: ['PIN'],
    summary: 'Set the initial 4-digit PIN (only while hasPin is false)',
    headers: tenantHeaders,
    auth,
    body: CreatePin,
    responses: { 201: { description: 'PIN created', schema: Message }, 409: { description: 'PIN_ALREADY_SET: use change-pin' } },
    async handler({ auth: { em, holder }, body }) {
      await createPin(em, config, holder, body.pin);
      return { status: 201, body: { message: 'PIN criado com sucesso.' } };
    },
  });

  defineRoute(router, registry, {
    method: 'post',
    path: '/passwords/change-pin',
    tags: ['PIN'],
    summary: 'Change the PIN (current PIN and new PIN)',
    headers: tenantHeaders,
    auth,
    body: ChangePin,
    responses: {
      200: { description: 'PIN changed', schema: Message },
      403: { description: 'INVALID_PIN or PIN_NOT_SET' },
      423: { description: 'PIN_LOCKED after 3 wrong attempts; an operator unlocks it' },
    },
    async handler({ auth: { em, holder }, body }) {
      await changePin(em, config, holder, body.currentPin, body.newPin);
      return { status: 200, body: { message: 'PIN alterado com sucesso.' } };
    },
  });

  defineRoute(router, registry, {
    method: 'put',
    path: '/accounts/:accountId/monthly-goal',
    tags: ['Accounts'],
    summary: "Set the account's monthly spending goal (reais); 0 clears it",
    headers: tenantHeaders,
    auth,
    params: accountIdParams,
    body: z
      .object({
        monthlyGoal: reaisLimitSchema.openapi({ example: 1500, description: 'reais, at most 2 decimal places; 0 clears the goal' }),
      })
      .openapi('MonthlyGoal'),
    responses: { 200: { description: 'The account with its new goal', schema: z.object({ account: AccountSummary }) } },
    async handler({ auth: { em, holder }, params, body }) {
      const account = await getOwnAccount(em, holder, params.accountId);
      return { status: 200, body: { account: await setMonthlyGoal(em, account, body.monthlyGoal) } };
    },
  });
}
