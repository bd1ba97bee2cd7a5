import { Account } from '../src/accounts/entities.ts';
import { recordTev } from '../src/transfers/service.ts';
import type { TevOutcome } from '../workflows/tev.ts';
import type { ApprovalStatus } from '../workflows/approval.ts';
import type { ActivityDeps } from './index.ts';

interface Payload {
  destinationAccountId: string;
  amountCents: string;
  description: string | null;
  externalRef: string | null;
}

export function approvalActivities({ orm, config }: ActivityDeps) {
  return {
    /** Marks the request APPROVED and records its transfer (idempotent: the transfer id comes from the request). */
    async approveAndOpenTev(requestId: string): Promise<{ tevId: string; outcome: TevOutcome | null }> {
      return orm.em.fork().transactional(async (em) => {
        const [req] = await em.execute<{ tenant_id: string; account_id: string; payload: Payload | string }[]>(
          `update approval_request set status = 'APPROVED', decided_at = coalesce(decided_at, now())
            where id = ? and status in ('PENDING', 'APPROVED') returning tenant_id, account_id, payload`,
          [requestId],
        );
        if (!req) throw new Error(`approval request ${requestId} is not open`);
        const payload: Payload = typeof req.payload === 'string' ? JSON.parse(req.payload) : req.payload;
        const [source, destination] = [await em.findOneOrFail(Account, { id: req.account_id }), await em.findOneOrFail(Account, { id: payload.destinationAccountId })];
        const { tevId, stored } = await recordTev(em, config.KEY_PEPPER, {
          tenantId: req.tenant_id,
          source,
          destination,
          amountCents: BigInt(payload.amountCents),
          description: payload.description,
          externalRef: payload.externalRef,
          idempotencyKey: `approval:${requestId}`,
          origin: 'APPROVAL',
        });
        await em.execute('update approval_request set operation_id = ? where id = ?', [tevId, requestId]);
        return { tevId, outcome: stored && stored.kind !== 'submitted_unknown' ? stored.outcome : null };
      });
    },

    /** Final state of the request; only an open request changes. */
    async closeApproval(requestId: string, status: Exclude<ApprovalStatus, 'PENDING' | 'APPROVED'>, result: { tevId: string; reason: string | null } | null): Promise<ApprovalStatus> {
      const [row] = await orm.em.fork().execute<{ status: ApprovalStatus }[]>(
        `update approval_request set status = ?, reason = ?, operation_id = coalesce(?, operation_id), decided_at = coalesce(decided_at, now())
          where id = ? and status in ('PENDING', 'APPROVED') returning status`,
        [status, result?.reason ?? null, result?.tevId ?? null, requestId],
      );
      if (row) return row.status;
      const [current] = await orm.em.fork().execute<{ status: ApprovalStatus }[]>('select status from approval_request where id = ?', [requestId]);
      return current!.status;
    },
  };
}
export type ApprovalActivities = ReturnType<typeof approvalActivities>;
