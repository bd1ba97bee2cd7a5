import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import type { Router } from 'express';
import { z } from '../shared/zod.ts';
import { getOwnAccount } from '../accounts/service.ts';
import { accountIdParams, tenantHeaders } from '../http/common-schemas.ts';
import { defineRoute, type Authenticator } from '../http/route.ts';
import type { HolderAuth } from '../identity/authenticator.ts';
import type { PlatformContext } from '../platform-context.ts';
import { sentPayout } from './sent-payouts.ts';
import { writeStatementExport, EXPORT_TYPES, type ExportType } from './exports.ts';
import { BalanceAt, balanceAtExample, balanceQuery, CSV_EXAMPLE, exportQuery, OFX_EXAMPLE, PDF_EXAMPLE, payoutExample, payoutParams, Payout, statementExample, statementQuery, StatementPage } from './schemas.ts';
import { balanceAt, statementPage } from './service.ts';

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

  defineRoute(router, registry, {
    method: 'get',
    path: '/accounts/:accountId/balance',
    operationId: 'getBalanceAt',
    tags: ['Statements'],
    summary: 'The balance at an instant (or now), and the last transaction it includes',
    description:
      'Exact: the sum of the account\'s entries up to `at`, read as the balance after the last movement at or before it (one indexed read). ' +
      'A movement is included when its `createdAt`, as the statement shows it to the millisecond, is not after `at`.',
    headers: tenantHeaders,
    auth,
    params: accountIdParams,
    query: balanceQuery,
    responses: { 200: { description: 'The balance', schema: BalanceAt, example: balanceAtExample } },
    raises: [getOwnAccount],
    async handler({ auth: a, params, query }) {
      const account = await getOwnAccount(a.em, a.holder, params.accountId);
      return { status: 200, body: await balanceAt(a.em, account, query.at) };
    },
  });

  defineRoute(router, registry, {
    method: 'get',
    path: '/accounts/:accountId/statement',
    operationId: 'exportStatement',
    tags: ['Statements'],
    summary: 'The statement of a date range as a file: CSV, OFX 1.0.2 or PDF, by Accept',
    description:
      'Streamed as it is read, whatever the number of transactions. Oldest first. `amount` (CSV) and `TRNAMT` (OFX) are what each transaction did to the balance, its fee included, in reais; ' +
      'they add up to the closing balance less the opening one. CSV: RFC 4180, UTF-8, a header row. OFX: 1.0.2 (SGML), UTF-8, what Brazilian accounting software imports. ' +
      'PDF: the opening balance, each transaction, each day\'s closing balance and the closing balance. A range covers at most one year.',
    headers: tenantHeaders,
    auth,
    params: accountIdParams,
    query: exportQuery,
    produces: Object.values(EXPORT_TYPES),
    responses: {
      200: {
        description: 'The statement file',
        contentType: 'text/csv',
        schema: z.string(),
        example: CSV_EXAMPLE,
        alternatives: [
          { contentType: 'application/x-ofx', schema: z.string(), example: OFX_EXAMPLE },
          { contentType: 'application/pdf', schema: z.string().openapi({ format: 'binary' }), example: PDF_EXAMPLE },
        ],
      },
    },
    raises: [getOwnAccount],
    async handler({ auth: a, params, query, accepted }) {
      const account = await getOwnAccount(a.em, a.holder, params.accountId);
      const type = accepted as ExportType;
      const extension = type === EXPORT_TYPES.csv ? 'csv' : type === EXPORT_TYPES.ofx ? 'ofx' : 'pdf';
      return {
        status: 200,
        contentType: type === EXPORT_TYPES.csv ? 'text/csv; charset=utf-8; header=present' : type,
        headers: { 'content-disposition': `attachment; filename="extrato-${account.number}-${query.startDate}-${query.endDate}.${extension}"` },
        write: (res) => writeStatementExport(a.em, a.holder, account, query, type, res),
      };
    },
  });
}
