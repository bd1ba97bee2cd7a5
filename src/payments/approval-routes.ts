import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import type { Router } from 'express';
import { accountNumber, branch, cents, cuid, paginated, tenantHeaders, utcDateTime, uuid } from '../http/common-schemas.ts';
import type { Authenticator } from '../http/route.ts';
import { defineRoute } from '../http/route.ts';
import type { HolderAuth } from '../identity/authenticator.ts';
import { pinSchema } from '../identity/pin.ts';
import { decideApproval, listForApprover, readApproval } from '../approvals/service.ts';
import type { PlatformContext } from '../platform-context.ts';
import { pageQuery } from '../shared/pagination.ts';
import { z } from '../shared/zod.ts';
import { PIX_KEY_TYPES } from '../pix/keys.ts';
import { approvalView } from './held-payment.ts';

const STATUSES = ['PENDING', 'APPROVED', 'EXECUTED', 'FAILED', 'REJECTED', 'EXPIRED', 'CANCELLED'] as const;

const approvalRequestId = () => uuid('5b7e9c1d-2f3a-4b8c-9d0e-1a2b3c4d5e6f');

export const ApprovalRequest = z
  .object({
    approvalRequestId: approvalRequestId(),
    status: z.enum(STATUSES),
    kind: z.enum(['TEV', 'PIX', 'BATCH']),
    accountId: uuid('8c5e2f1a-7b3d-4c9e-a2f6-1d0b9e8c7a65'),
    amountCents: cents(),
    destination: z.union([
      z.object({ branch: branch(), account: accountNumber() }).openapi('TevDestination'),
      z.object({ pixKey: z.string(), pixKeyType: z.enum(PIX_KEY_TYPES), name: z.string() }).openapi('PixDestination'),
      z
        .object({ batchId: cuid('b8k2m5q1w7x4z0v3c6n9r2t4'), itemCount: z.number().int().openapi({ description: 'Its valid items: one approval covers them all', example: 120 }) })
        .openapi('BatchDestination'),
    ]),
    description: z.string().nullable(),
    externalRef: z.string().nullable(),
    cancelReason: z
      .string()
      .nullable()
      .openapi({
        description:
          "Why a CANCELLED request was cancelled: DUAL_APPROVAL_DISABLED, the account's dual approval was turned off while it waited (send the payment again); BATCH_CANCELLED, its batch was cancelled by the integrator",
      }),
    createdAt: utcDateTime(),
    expiresAt: utcDateTime('2026-11-23T13:45:07.123Z'),
    decidedAt: utcDateTime().nullable(),
    result: z
      .object({
        tevId: cuid().optional(),
        payoutId: cuid().optional(),
        batchId: cuid().optional(),
        status: z.enum(['DONE', 'PROCESSING', 'FAILED']),
        reason: z.string().nullable().openapi({ description: 'Why the payment was refused, e.g. INSUFFICIENT_BALANCE' }),
      })
      .nullable()
      .openapi({ description: 'The payment once it ran: a TEV (DONE or FAILED), a Pix payout (PROCESSING, then read it as a payout; or FAILED), or a batch (PROCESSING: read it as a batch)' }),
  })
  .openapi('ApprovalRequest');

const approvalExample = {
  approvalRequestId: '5b7e9c1d-2f3a-4b8c-9d0e-1a2b3c4d5e6f',
  status: 'EXECUTED' as const,
  kind: 'TEV' as const,
  accountId: '8c5e2f1a-7b3d-4c9e-a2f6-1d0b9e8c7a65',
  amountCents: '150000',
  destination: { branch: '0001', account: '1000024' },
  description: 'Aluguel de novembro',
  externalRef: null,
  cancelReason: null,
  createdAt: '2026-11-22T13:45:07.123Z',
  expiresAt: '2026-11-23T13:45:07.123Z',
  decidedAt: '2026-11-22T14:02:51.480Z',
  result: { tevId: 't2k7m4q9x1v8c3n6b0z5w7r4', status: 'DONE' as const, reason: null },
};

export const ApprovalPending = z
  .object({ approvalRequestId: approvalRequestId(), status: z.enum(STATUSES), expiresAt: utcDateTime('2026-11-23T13:45:07.123Z') })
  .openapi('ApprovalPending');

export const approvalPendingExample = { approvalRequestId: '5b7e9c1d-2f3a-4b8c-9d0e-1a2b3c4d5e6f', status: 'PENDING' as const, expiresAt: '2026-11-23T13:45:07.123Z' };

const idParams = z.object({ id: z.uuid({ error: 'id must be a UUID' }) });

export function registerApprovalRoutes(router: Router, registry: OpenAPIRegistry, platform: PlatformContext, auth: Authenticator<HolderAuth>): void {
  defineRoute(router, registry, {
    method: 'get',
    path: '/approvals',
    operationId: 'listApprovals',
    tags: ['Approvals'],
    summary: 'Requests waiting for (or decided by) the calling approver, newest first',
    headers: tenantHeaders,
    auth,
    query: pageQuery.extend({ status: z.enum(STATUSES).optional() }),
    responses: {
      200: {
        description: 'Requests',
        schema: paginated('approvals', ApprovalRequest),
        example: { approvals: [approvalExample], pagination: { limit: 20, nextCursor: null, hasMore: false } },
      },
    },
    async handler({ auth: a, query }) {
      const { approvals, pagination } = await listForApprover(a.em, platform.config.KEY_PEPPER, a.holder.id, query.status, query.limit, query.cursor);
      return { status: 200, body: { approvals: approvals.map(approvalView), pagination } };
    },
  });

  defineRoute(router, registry, {
    method: 'get',
    path: '/approvals/:id',
    operationId: 'getApproval',
    tags: ['Approvals'],
    summary: 'An approval request (its requester or its approver)',
    headers: tenantHeaders,
    auth,
    params: idParams,
    responses: { 200: { description: 'The request', schema: ApprovalRequest, example: approvalExample } },
    raises: [readApproval],
    async handler({ auth: a, params }) {
      return { status: 200, body: approvalView(await readApproval(a.em, a.holder, params.id)) };
    },
  });

  for (const [action, approve] of [['approve', true], ['reject', false]] as const) {
    defineRoute(router, registry, {
      method: 'post',
      path: `/approvals/:id/${action}`,
      operationId: approve ? 'approveApproval' : 'rejectApproval',
      tags: ['Approvals'],
      summary: approve ? 'Approve: the payment runs through the same path as an immediate one' : 'Reject: nothing moves',
      description: "The approver's token and PIN. Answers the request in its final state (EXECUTED or FAILED after approval, REJECTED).",
      headers: tenantHeaders,
      auth,
      params: idParams,
      body: z.object({ pin: pinSchema.optional() }).openapi('ApprovalDecision'),
      bodyExample: { pin: '2580' },
      responses: {
        200: {
          description: 'Decided',
          schema: ApprovalRequest,
          example: approve ? approvalExample : { ...approvalExample, status: 'REJECTED' as const, result: null },
        },
      },
      raises: [decideApproval],
      async handler({ auth: a, params, body }) {
        return { status: 200, body: approvalView(await decideApproval(platform, a, params.id, approve, body.pin)) };
      },
    });
  }
}
