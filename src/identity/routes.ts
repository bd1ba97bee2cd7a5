import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import type { Router } from 'express';
import { z } from '../shared/zod.ts';
import { accountViews, holderAccounts, getOwnAccount, setMonthlyGoal } from '../accounts/service.ts';
import { accountIdParams, tenantHeaders } from '../http/common-schemas.ts';
import { defineRoute, type Authenticator } from '../http/route.ts';
import type { PlatformContext } from '../platform-context.ts';
import type { HolderType } from '../shared/documents.ts';
import { reaisLimitSchema } from '../shared/money.ts';
import type { HolderAuth } from './authenticator.ts';
import type { Holder } from './entities.ts';
import { changePin, createPin } from './pin.ts';
import {
  accountExample,
  AccountSummary,
  authenticationExample,
  AuthenticationResult,
  ChangePin,
  ClientLogin,
  CompanyRegistration,
  CreatePin,
  holderExample,
  Message,
  PasswordLogin,
  PersonRegistration,
  registrationResult,
} from './schemas.ts';
import { authenticateClient, authenticateWithPassword, registerAndOnboard } from './service.ts';
import { issueHolderToken } from './tokens.ts';
import { holderView } from './holder-view.ts';

export function registerIdentityRoutes(router: Router, registry: OpenAPIRegistry, platform: PlatformContext, auth: Authenticator<HolderAuth>): void {
  const { config, orm, temporal } = platform;

  async function authenticationResult(holder: Holder, token: string) {
    const em = orm.em.fork();
    return { token, entityType: holder.type, entity: holderView(config, holder), accounts: await accountViews(em, await holderAccounts(em, holder.id)) };
  }

  const registration = (type: HolderType, path: '/persons' | '/companies', body: typeof PersonRegistration, key: 'person' | 'company') =>
    defineRoute(router, registry, {
      method: 'post',
      path,
      operationId: type === 'PERSON' ? 'registerPerson' : 'registerCompany',
      tags: ['Registration'],
      summary: type === 'PERSON' ? 'Register a person (CPF)' : 'Register a company (CNPJ)',
      description: 'Public. Creates the holder (status PENDING) and starts its KYC onboarding; the token works at once, operations wait for KYC.',
      headers: tenantHeaders,
      body,
      bodyExample:
        type === 'PERSON'
          ? { name: 'Maria da Silva', document: '52998224725', email: 'maria@example.com', password: 's3nha-forte' }
          : { name: 'Padaria Azul LTDA', document: '11444777000161', email: 'financeiro@padaria.example', password: 's3nha-forte' },
      responses: {
        201: {
          description: 'Registered: status PENDING until KYC (onboardingLink) is done',
          schema: registrationResult(key),
          example: { [key]: type === 'PERSON' ? holderExample : { ...holderExample, name: 'Padaria Azul LTDA', document: '11444777000161', email: 'financeiro@padaria.example' }, token: authenticationExample.token },
        },
      },
      raises: [registerAndOnboard],
      async handler({ headers, body: input }) {
        const holder = await registerAndOnboard(orm.em.fork(), temporal.client, config, headers['x-tenant-id'], type, input);
        return { status: 201, body: { [key]: holderView(config, holder), token: issueHolderToken(config, holder) } };
      },
    });
  registration('PERSON', '/persons', PersonRegistration, 'person');
  registration('COMPANY', '/companies', CompanyRegistration, 'company');

  defineRoute(router, registry, {
    method: 'post',
    path: '/authenticate',
    operationId: 'authenticate',
    tags: ['Authentication'],
    summary: 'Authenticate a holder with document and password',
    description:
      'Token valid 1 hour. Wrong password and unknown document answer the same 401; repeated failures are limited (429) per document and per tenant and client address.',
    headers: tenantHeaders,
    body: PasswordLogin,
    bodyExample: { document: '52998224725', password: 's3nha-forte' },
    responses: { 200: { description: 'Authenticated: the token, the holder and its accounts', schema: AuthenticationResult, example: authenticationExample } },
    raises: [authenticateWithPassword],
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
    operationId: 'authenticateClient',
    tags: ['Authentication'],
    summary: 'Exchange the tenant API key for a 24-hour token of one holder (server to server)',
    description: 'Send the key in X-Tenant-Api-Key (`tnk_<prefix>.<secret>`). Revoking the key ends every token it issued at once.',
    headers: tenantHeaders.extend({ 'x-tenant-api-key': z.string().optional().openapi({ description: '`tnk_<prefix>.<secret>`' }) }),
    body: ClientLogin,
    bodyExample: { document: '52998224725' },
    // The key is validated as optional so that a missing one is 401, as the interface says; it is required all the same.
    security: [['tenantId', 'tenantApiKey']],
    responses: { 200: { description: 'Authenticated: a 24-hour token of this holder, the holder and its accounts', schema: AuthenticationResult, example: authenticationExample } },
    raises: [authenticateClient],
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
    operationId: 'createPin',
    tags: ['PIN'],
    summary: 'Set the initial 4-digit PIN (only while hasPin is false)',
    headers: tenantHeaders,
    auth,
    body: CreatePin,
    bodyExample: { pin: '2580' },
    responses: { 201: { description: 'PIN created', schema: Message, example: { message: 'PIN criado com sucesso.' } } },
    raises: [createPin],
    async handler({ auth: { em, holder }, body }) {
      await createPin(em, config, holder, body.pin);
      return { status: 201, body: { message: 'PIN criado com sucesso.' } };
    },
  });

  defineRoute(router, registry, {
    method: 'post',
    path: '/passwords/change-pin',
    operationId: 'changePin',
    tags: ['PIN'],
    summary: 'Change the PIN (current PIN and new PIN)',
    headers: tenantHeaders,
    auth,
    body: ChangePin,
    bodyExample: { currentPin: '2580', newPin: '3691' },
    responses: { 200: { description: 'PIN changed', schema: Message, example: { message: 'PIN alterado com sucesso.' } } },
    raises: [changePin],
    async handler({ auth: { em, holder }, body }) {
      await changePin(em, config, holder, body.currentPin, body.newPin);
      return { status: 200, body: { message: 'PIN alterado com sucesso.' } };
    },
  });

  defineRoute(router, registry, {
    method: 'put',
    path: '/accounts/:accountId/monthly-goal',
    operationId: 'setMonthlyGoal',
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
    bodyExample: { monthlyGoal: 1500 },
    responses: { 200: { description: 'The account with its new goal', schema: z.object({ account: AccountSummary }), example: { account: accountExample } } },
    raises: [getOwnAccount],
    async handler({ auth: { em, holder }, params, body }) {
      const account = await getOwnAccount(em, holder, params.accountId);
      return { status: 200, body: { account: await setMonthlyGoal(em, account, body.monthlyGoal) } };
    },
  });
}
