import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import type { Router } from 'express';
import { pixAccountParams } from '../fees/routes.ts';
import { cents, cuid, paginated, utcDateTime } from '../http/common-schemas.ts';
import type { Authenticator } from '../http/route.ts';
import { defineRoute } from '../http/route.ts';
import { operatingPixAccount } from '../identity/operating-account.ts';
import { batchCounts } from '../events/catalog.ts';
import { pixKeyTypeSchema, validatePixKey } from '../pix/keys.ts';
import { idempotencyKey } from '../shared/idempotency.ts';
import { centsAmountSchema } from '../shared/money.ts';
import { pageQuery } from '../shared/pagination.ts';
import { z } from '../shared/zod.ts';
import { scopedAccount, type IntegrationAuth } from '../tenants/api-key-auth.ts';
import { description, externalRef } from '../transfers/schemas.ts';
import { BATCH_ITEM_STATUSES } from './store.ts';
import { batchOfAccount, cancelBatch, createBatch, listBatchItems, MAX_BATCH_ITEMS, readBatch, type BatchContext } from './service.ts';
import { INVALID_ITEM_REASONS, type BatchItemRequest } from './validation.ts';

const itemCommon = {
  externalRef: externalRef.openapi({ description: 'Your reference of the item, unique in the batch', example: 'salario-2026-11-0001' }),
  amountCents: centsAmountSchema.openapi({ description: 'cents: a string of digits or a JSON integer' }),
  description: description.optional().openapi({ description: 'On both statements; a Pix item without one says "Pix enviado"' }),
};

/** A Pix by key (validated against its type, kept in canonical form) or a TEV by branch and account of the tenant. */
const BatchItemInput = z
  .discriminatedUnion('kind', [
    z
      .object({
        kind: z.literal('PIX'),
        ...itemCommon,
        pixKey: z.string().max(100).openapi({ description: 'Pix key, in the format of its type', example: 'joao@example.com' }),
        pixKeyType: pixKeyTypeSchema,
      })
      .openapi('BatchPixItem'),
    z
      .object({
        kind: z.literal('TEV'),
        ...itemCommon,
        branch: z.string().regex(/^\d{1,4}$/, 'digits only, with or without leading zeros').openapi({ example: '0001' }),
        account: z.string().regex(/^\d{1,20}$/, 'digits only, with or without leading zeros').openapi({ example: '1000024' }),
      })
      .openapi('BatchTevItem'),
  ])
  .transform((item, ctx): BatchItemRequest => {
    const common = { externalRef: item.externalRef, amountCents: item.amountCents, description: item.description ?? null };
    if (item.kind === 'TEV') return { ...common, kind: 'TEV', branch: item.branch, account: item.account };
    const check = validatePixKey(item.pixKeyType, item.pixKey);
    if (check.ok) return { ...common, kind: 'PIX', pixKey: check.key, pixKeyType: item.pixKeyType };
    ctx.addIssue({ code: 'custom', path: ['pixKey'], message: `invalid ${item.pixKeyType} Pix key: ${check.reason}` });
    return z.NEVER;
  });

const NewBatch = z
  .object({
    items: z
      .array(BatchItemInput)
      .min(1, 'a batch has at least one item')
      .max(MAX_BATCH_ITEMS, `a batch has at most ${MAX_BATCH_ITEMS} items`)
      .superRefine((items, ctx) => {
        const seen = new Map<string, number>();
        items.forEach((item, i) => {
          const first = seen.get(item.externalRef);
          if (first === undefined) seen.set(item.externalRef, i);
          else ctx.addIssue({ code: 'custom', path: [i, 'externalRef'], message: `externalRef "${item.externalRef}" is also item ${first}'s: each is unique in the batch` });
        });
      }),
  })
  .openapi('PaymentBatchRequest');

const batchId = () => cuid('b8k2m5q1w7x4z0v3c6n9r2t4');

const PaymentBatch = z
  .object({
    batchId: batchId(),
    pixAccountId: cuid('pk4m9q2x7v1c8n3b6z0w5r2t'),
    status: z.enum(['AWAITING_APPROVAL', 'PENDING', 'PROCESSING', 'FINISHED', 'CANCELLED', 'REJECTED', 'REFUSED']).openapi({
      description:
        'AWAITING_APPROVAL: held for the account\'s approver (one approval for the whole batch); PENDING: about to start; PROCESSING: paying its items. Final: FINISHED, ' +
        'CANCELLED (before it started), REJECTED (its approval rejected, expired or cancelled), REFUSED (its total with fees not available when it started)',
    }),
    reason: z.string().nullable().openapi({ description: 'Why it ended without paying: APPROVAL_REJECTED, APPROVAL_EXPIRED, DUAL_APPROVAL_DISABLED, INSUFFICIENT_BALANCE, CANCELLED', example: null }),
    approvalRequestId: z.uuid().nullable().openapi({ description: 'The approval request that holds it, on an account under dual approval', example: null }),
    counts: batchCounts,
    amountCents: cents('250000').openapi({ description: 'What its valid items send, fees not included' }),
    paidCents: cents('250000').openapi({ description: 'What its paid items sent' }),
    createdAt: utcDateTime(),
    startedAt: utcDateTime().nullable(),
    cancelledAt: utcDateTime().nullable().openapi({ example: null }),
    finishedAt: utcDateTime().nullable(),
  })
  .openapi('PaymentBatch');

const batchExample = {
  batchId: 'b8k2m5q1w7x4z0v3c6n9r2t4',
  pixAccountId: 'pk4m9q2x7v1c8n3b6z0w5r2t',
  status: 'FINISHED' as const,
  reason: null,
  approvalRequestId: null,
  counts: { total: 3, invalid: 1, pending: 0, processing: 0, paid: 2, failed: 0, cancelled: 0 },
  amountCents: '250000',
  paidCents: '250000',
  createdAt: '2026-11-24T13:45:07.123Z',
  startedAt: '2026-11-24T13:45:07.412Z',
  cancelledAt: null,
  finishedAt: '2026-11-24T13:45:10.031Z',
};

const payoutIdOf = z.string().nullable().openapi({ description: "The item's transfer (a TEV's tevId) or payout (a Pix's payoutId), the id its events carry; null for an invalid item", example: 'p6c1v8x3z0b5n2m9q4w7k1r6' });

const ItemValidation = z
  .object({
    index: z.number().int().openapi({ description: "The item's position in the request, from 0", example: 0 }),
    externalRef: z.string().openapi({ example: 'salario-2026-11-0001' }),
    kind: z.enum(['PIX', 'TEV']),
    valid: z.boolean().openapi({ description: 'false: listed here and never paid' }),
    payoutId: payoutIdOf,
    reason: z.enum(INVALID_ITEM_REASONS).nullable().openapi({ description: 'Why an invalid item is refused', example: null }),
  })
  .openapi('PaymentBatchItemValidation');

const BatchCreated = PaymentBatch.extend({ items: z.array(ItemValidation).openapi({ description: 'Each item, in request order, with its validation' }) }).openapi('PaymentBatchCreated');

const BatchItem = z
  .object({
    index: z.number().int().openapi({ example: 0 }),
    externalRef: z.string().openapi({ example: 'salario-2026-11-0001' }),
    kind: z.enum(['PIX', 'TEV']),
    amountCents: cents('150000'),
    description: z.string().nullable().openapi({ example: 'Salário de novembro' }),
    destination: z.union([
      z.object({ pixKey: z.string(), pixKeyType: pixKeyTypeSchema, name: z.string().nullable().openapi({ description: "The key's owner, as the directory answered; null when none did" }) }).openapi('BatchPixDestination'),
      z.object({ branch: z.string(), account: z.string() }).openapi('BatchTevDestination'),
    ]),
    payoutId: payoutIdOf,
    status: z.enum(BATCH_ITEM_STATUSES).openapi({
      description: 'INVALID (never paid), PENDING, PROCESSING (a Pix debited, waiting for the provider), PAID, FAILED (refused when paid, or failed at the provider), CANCELLED',
    }),
    reason: z.string().nullable().openapi({ description: 'Why it is INVALID, FAILED (INSUFFICIENT_BALANCE, LIMIT_EXCEEDED, the provider\'s reason, …) or CANCELLED', example: null }),
  })
  .openapi('PaymentBatchItem');

const itemExample = {
  index: 0,
  externalRef: 'salario-2026-11-0001',
  kind: 'PIX' as const,
  amountCents: '150000',
  description: 'Salário de novembro',
  destination: { pixKey: 'joao@example.com', pixKeyType: 'EMAIL' as const, name: 'João Souza' },
  payoutId: 'p6c1v8x3z0b5n2m9q4w7k1r6',
  status: 'PAID' as const,
  reason: null,
};

const batchParams = pixAccountParams.extend({ batchId: z.string().min(1).max(64) });

export function registerBatchRoutes(router: Router, registry: OpenAPIRegistry, ctx: BatchContext, auth: Authenticator<IntegrationAuth>): void {
  defineRoute(router, registry, {
    method: 'post',
    path: '/v1/pix-accounts/:accountId/batches',
    operationId: 'createPaymentBatch',
    tags: ['Batch payouts'],
    summary: `Pay up to ${MAX_BATCH_ITEMS} Pix (by key) and TEVs (by branch and account) as one batch`,
    description:
      'Validation first, before any money moves: every Pix key is resolved through the provider\'s directory and every TEV account found in the tenant; an item that fails ' +
      "is listed with its reason in `items` and never paid, the others proceed. The valid items' total with their fees must be available (else 422 INSUFFICIENT_BALANCE, nothing " +
      'recorded). On an account under dual approval the whole batch waits for one approval (AWAITING_APPROVAL, `approvalRequestId`). Each item is then paid as an immediate ' +
      'payment, with its own `payoutId` and events; the batch ends with `payment.batch.finished`. A retry with the same Idempotency-Key and body answers the same batch.',
    headers: z.object({ 'idempotency-key': idempotencyKey }),
    auth,
    params: pixAccountParams,
    body: NewBatch,
    bodyExample: {
      items: [
        { kind: 'PIX', externalRef: 'salario-2026-11-0001', amountCents: '150000', description: 'Salário de novembro', pixKey: 'joao@example.com', pixKeyType: 'EMAIL' },
        { kind: 'TEV', externalRef: 'salario-2026-11-0002', amountCents: '100000', branch: '0001', account: '1000024' },
      ],
    },
    responses: {
      202: {
        description: 'Accepted (or the batch of this Idempotency-Key): its items validated, its payment under way (or held for approval)',
        schema: BatchCreated,
        example: {
          ...batchExample,
          status: 'PENDING' as const,
          counts: { ...batchExample.counts, pending: 2, paid: 0 },
          paidCents: '0',
          startedAt: null,
          finishedAt: null,
          items: [
            { index: 0, externalRef: 'salario-2026-11-0001', kind: 'PIX' as const, valid: true, payoutId: 'p6c1v8x3z0b5n2m9q4w7k1r6', reason: null },
            { index: 1, externalRef: 'salario-2026-11-0002', kind: 'TEV' as const, valid: true, payoutId: 't2k7m4q9x1v8c3n6b0z5w7r4', reason: null },
            { index: 2, externalRef: 'salario-2026-11-0003', kind: 'TEV' as const, valid: false, payoutId: null, reason: 'DESTINATION_NOT_FOUND' as const },
          ],
        },
      },
    },
    raises: [operatingPixAccount, createBatch],
    async handler({ auth: a, params, headers, body }) {
      const { account } = await operatingPixAccount(a, params.accountId);
      return { status: 202, body: await createBatch(ctx, { account, idempotencyKey: headers['idempotency-key'], items: body.items }) };
    },
  });

  defineRoute(router, registry, {
    method: 'get',
    path: '/v1/pix-accounts/:accountId/batches/:batchId',
    operationId: 'getPaymentBatch',
    tags: ['Batch payouts'],
    summary: 'Read a batch: where it stands, and its items by state',
    auth,
    params: batchParams,
    responses: { 200: { description: 'The batch', schema: PaymentBatch, example: batchExample } },
    raises: [scopedAccount, readBatch],
    async handler({ auth: a, params }) {
      const account = await scopedAccount(a, params.accountId);
      return { status: 200, body: await readBatch(a.em, account, params.batchId) };
    },
  });

  defineRoute(router, registry, {
    method: 'get',
    path: '/v1/pix-accounts/:accountId/batches/:batchId/items',
    operationId: 'listPaymentBatchItems',
    tags: ['Batch payouts'],
    summary: "List a batch's items in request order, with each one's payoutId, status and reason",
    auth,
    params: batchParams,
    query: pageQuery.extend({ status: z.enum(BATCH_ITEM_STATUSES).optional().openapi({ description: 'Only items in this status' }) }),
    responses: {
      200: { description: 'Items', schema: paginated('items', BatchItem), example: { items: [itemExample], pagination: { limit: 20, nextCursor: null, hasMore: false } } },
    },
    raises: [scopedAccount, listBatchItems],
    async handler({ auth: a, params, query }) {
      const account = await scopedAccount(a, params.accountId);
      return { status: 200, body: await listBatchItems(a.em, ctx.config.KEY_PEPPER, account, params.batchId, query.status, query.limit, query.cursor) };
    },
  });

  defineRoute(router, registry, {
    method: 'post',
    path: '/v1/pix-accounts/:accountId/batches/:batchId/cancel',
    operationId: 'cancelPaymentBatch',
    tags: ['Batch payouts'],
    summary: 'Cancel a batch before it starts, or its items not paid yet once it has',
    description:
      'Before it starts (AWAITING_APPROVAL, PENDING): the batch is CANCELLED, nothing is paid and its approval request is withdrawn. Once PROCESSING: its items not paid yet ' +
      'are CANCELLED; those paid stay paid, and the batch ends FINISHED once they settle. Cancelling again answers the batch as it stands; a batch that ended otherwise is 409.',
    auth,
    params: batchParams,
    responses: { 200: { description: 'The batch, its items not paid yet cancelled', schema: PaymentBatch, example: { ...batchExample, status: 'CANCELLED' as const, reason: 'CANCELLED' } } },
    raises: [scopedAccount, batchOfAccount, cancelBatch],
    async handler({ auth: a, params }) {
      const account = await scopedAccount(a, params.accountId);
      return { status: 200, body: await cancelBatch(ctx, account, params.batchId) };
    },
  });
}
