import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import type { Router } from 'express';
import { authorizeWrite } from '../accounts/operating.ts';
import { tenantHeaders } from '../http/common-schemas.ts';
import type { Authenticator } from '../http/route.ts';
import { defineRoute } from '../http/route.ts';
import type { HolderAuth } from '../identity/authenticator.ts';
import { pinSchema } from '../identity/pin.ts';
import type { Services } from '../services.ts';
import { AppError } from '../shared/errors.ts';
import { pageQuery } from '../shared/pagination.ts';
import { z } from '../shared/zod.ts';
import { approvalView, decideApproval, listForApprover, visibleApproval } from './service.ts';

const STATUSES = ['PENDING', 'APPROVED', 'EXECUTED', 'FAILED', 'REJECTED', 'EXPIRED'] as const;

export const ApprovalRequest = z
  .object({
    approvalRequestId: z.uuid(),
    status: z.enum(STATUSES),
    kind: z.enum(['TEV', 'PIX']),
    accountId: z.uuid(),
    amountCents: z.string(),
    destination: z.union([z.object({ branch: z.string(), account: z.string() }), z.object({ pixKey: z.string(), pixKeyType: z.string(), name: z.string() })]),
    description: z.string().nullable(),
    externalRef: z.string().nullable(),
    createdAt: z.string(),
    expiresAt: z.string(),
    decidedAt: z.string().nullable(),
    result: z
      .object({ tevId: z.string().optional(), payoutId: z.string().optional(), status: z.enum(['DONE', 'PROCESSING', 'FAILED']), reason: z.string().nullable() })
      .nullable()
      .openapi({ description: 'The payment once it ran: a TEV (DONE or FAILED) or a Pix payout (PROCESSING, then read it as a payout; or FAILED)' }),
  })
  .openapi('ApprovalRequest');

export const ApprovalPending = z.object({ approvalRequestId: z.uuid(), status: z.enum(STATUSES), expiresAt: z.string() }).openapi('ApprovalPending');

const idParams = z.object({ id: z.uuid({ error: 'id must be a UUID' }) });

export function registerApprovalRoutes(router: Router, registry: OpenAPIRegistry, services: Services, auth: Authenticator<HolderAuth>): void {
  defineRoute(router, registry, {
    method: 'get',
    path: '/approvals',
    tags: ['Approvals'],
    summary: 'Requests waiting for (or decided by) the calling approver, newest first',
    headers: tenantHeaders,
    auth,
    query: pageQuery.extend({ status: z.enum(STATUSES).optional() }),
    responses: { 200: { description: 'Requests', schema: z.object({ approvals: z.array(ApprovalRequest), pagination: z.object({ limit: z.number(), nextCursor: z.string().nullable(), hasMore: z.boolean() }) }) } },
    async handler({ auth: a, query }) {
      return { status: 200, body: await listForApprover(a.em, services.config.KEY_PEPPER, a.holder.id, query.status, query.limit, query.cursor) };
    },
  });

  defineRoute(router, registry, {
    method: 'get',
    path: '/approvals/:id',
    tags: ['Approvals'],
    summary: 'An approval request (its requester or its approver)',
    headers: tenantHeaders,
    auth,
    params: idParams,
    responses: { 200: { description: 'The request', schema: ApprovalRequest } },
    async handler({ auth: a, params }) {
      return { status: 200, body: approvalView(await visibleApproval(a.em, a.holder, params.id)) };
    },
  });

  for (const [action, approve] of [['approve', true], ['reject', false]] as const) {
    defineRoute(router, registry, {
      method: 'post',
      path: `/approvals/:id/${action}`,
      tags: ['Approvals'],
      summary: approve ? 'Approve: the payment runs through the same path as an immediate one' : 'Reject: nothing moves',
      description: "The approver's token and PIN. Answers the request in its final state (EXECUTED or FAILED after approval, REJECTED).",
      headers: tenantHeaders,
      auth,
      params: idParams,
      body: z.object({ pin: pinSchema.optional() }).openapi('ApprovalDecision'),
      responses: {
        200: { description: 'Decided', schema: ApprovalRequest },
        403: { description: 'NOT_APPROVER (the requester), INVALID_PIN' },
        409: { description: 'APPROVAL_ALREADY_DECIDED (or expired)' },
      },
      async handler({ auth: a, params, body }) {
        const request = await visibleApproval(a.em, a.holder, params.id);
        if (request.approver_holder_id !== a.holder.id) throw new AppError(403, 'NOT_APPROVER', 'Only the approver of this account can decide this request');
        await authorizeWrite(a, services.config, body.pin);
        return { status: 200, body: approvalView(await decideApproval(services, a.em, request, approve)) };
      },
    });
  }
}
