import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import type { Router } from 'express';
import { getOwnAccount } from '../accounts/service.ts';
import { accountIdParams, tenantHeaders } from '../http/common-schemas.ts';
import { defineRoute, type Authenticator } from '../http/route.ts';
import type { HolderAuth } from '../identity/authenticator.ts';
import type { PlatformContext } from '../platform-context.ts';
import { sentPayout } from './sent-payouts.ts';
import { payoutExample, payoutParams, Payout, statementExample, statementQuery, StatementPage } from './schemas.ts';
import { statementPage } from './service.ts';

/** Read-only views of the holder's own account: they need no KYC completion, only the account's owner. */
export function registerStatementRoutes(router: Router, registry: OpenAPIRegistry, { config }: PlatformContext, auth: Authenticator<HolderAuth>): void {
  // Cursors are signed with the pepper (as tevIds are derived from it): rotating it only ends walks in progress.
  const cursorKey = config.KEY_PEPPER;

  defineRoute(router, registry, {
    method: 'get',
    path: '/accounts/:accountId/transactions',
    operationId: 'listTransactions',
    tags: ['Statements'],
    summary: 'Statement: the transactions of a date range, newest first, with cursor pagination',
    headers: tenantHeaders,
    auth,
    params: accountIdParams,
    query: statementQuery,
    responses: { 200: { description: 'One page of transactions', schema: StatementPage, example: statementExample } },
    raises: [getOwnAccount],
    async handler({ auth: a, params, query }) {
      const account = await getOwnAccount(a.em, a.holder, params.accountId);
      return { status: 200, body: await statementPage(a.em, account, query, cursorKey) };
    },
  });

  defineRoute(router, registry, {
    method: 'get',
    path: '/accounts/:accountId/payouts/:payoutId',
    operationId: 'getPayout',
    tags: ['Payouts'],
    summary: 'A payment sent from the account, by its payoutId (a TEV by its tevId)',
    headers: tenantHeaders,
    auth,
    params: payoutParams,
    responses: { 200: { description: 'The payout', schema: Payout, example: payoutExample } },
    raises: [getOwnAccount, sentPayout],
    async handler({ auth: a, params }) {
      const account = await getOwnAccount(a.em, a.holder, params.accountId);
      return { status: 200, body: await sentPayout(a.em, account, params.payoutId) };
    },
  });
}
