/** The approval workflow's step once the approver approves: the held payment runs, through the same domain functions as an immediate one. */
import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Config } from '../config.ts';
import { debitPayout, payoutDebitOf, payoutTiming } from '../pix/payouts.ts';
import { tevIdFor } from '../transfers/service.ts';
import { settleTev } from '../transfers/settlement.ts';
import type { PixPayoutInput } from '../../workflows/contracts/pix-payout.ts';
import { NOT_APPROVER } from '../../workflows/contracts/approval.ts';
import { approveRequest, rejectApproval } from '../approvals/service.ts';
import { findApproval } from '../approvals/store.ts';
import { releaseApprovedBatch, wakeBatch, type ExecutionConfig as BatchExecutionConfig } from '../batches/execution.ts';
import { heldPaymentOf } from './held-payment.ts';

/** What approving did: the payment ran (EXECUTED) or was refused (FAILED); a debited payout still has to settle. */
export interface Executed {
  status: 'EXECUTED' | 'FAILED';
  operationId: string;
  reason: string | null;
  payout: PixPayoutInput | null;
}

/** Approving ran nothing: the decider is not the approver (the request waits on), or the request was cancelled. */
export type NotExecuted = { status: typeof NOT_APPROVER } | { status: 'CANCELLED' };

type ExecutionConfig = Pick<Config, 'KEY_PEPPER' | 'TEV_MAX_AMOUNT_CENTS' | 'PIX_NOTIFICATION_WAIT_MS' | 'PIX_QUERY_MAX_WAIT_MS'> & BatchExecutionConfig;

/**
 * Marks the request APPROVED and runs its payment, in one transaction and idempotently (the payment's key comes from
 * the request): a TEV settles here; a Pix payout is debited here and settled by its own workflow. The same
 * transaction first checks, under lock, that `decidedBy` is still the approver of the account and the account still
 * under dual approval (`approveRequest`): an approval racing a change of approver or a switch-off never pays.
 */
export async function approveAndExecute(em: EntityManager, config: ExecutionConfig, requestId: string, decidedBy: string | null): Promise<Executed | NotExecuted> {
  return em.transactional(async (tx) => {
    const request = await approveRequest(tx, requestId, decidedBy);
    if (typeof request === 'string') return { status: request };
    const payment = heldPaymentOf(request);
    if (payment.kind === 'BATCH') {
      // The batch's items are paid by its own run, woken here: one approval covers them all.
      const released = await releaseApprovedBatch(tx, config, payment.batchId);
      return { status: released ? 'EXECUTED' : 'FAILED', operationId: payment.batchId, reason: released ? null : 'BATCH_CANCELLED', payout: null };
    }
    const idempotencyKey = `approval:${requestId}`;
    if (payment.kind === 'TEV') {
      const tevId = tevIdFor(config.KEY_PEPPER, request.accountId, idempotencyKey);
      const settled = await settleTev(
        tx,
        config,
        {
          tevId,
          tenantId: request.tenantId,
          sourceAccountId: request.accountId,
          destination: { accountId: payment.destinationAccountId },
          amountCents: payment.amountCents,
          description: payment.description,
          externalRef: payment.externalRef,
          endToEndId: randomUUID(),
          idempotencyKey,
          origin: 'APPROVAL',
        },
        'RESOLVE',
      );
      const outcome = 'outcome' in settled ? settled.outcome : null;
      return { status: outcome?.status === 'DONE' ? 'EXECUTED' : 'FAILED', operationId: tevId, reason: outcome ? outcome.reason : settled.code, payout: null };
    }
    const debit = payoutDebitOf(config.KEY_PEPPER, { ...payment, tenantId: request.tenantId, account: { id: request.accountId }, amountCents: BigInt(payment.amountCents), idempotencyKey });
    // No hand-off: the approval workflow starts the settlement as its child once this transaction committed.
    const debited = await debitPayout(tx, debit, 'GRANTED', null);
    if (debited.kind !== 'decided') throw new Error(`payout ${debit.payoutId} of approval ${requestId} was not decided by its debit (${debited.kind})`);
    const { opening } = debited;
    return {
      status: opening.status === 'PROCESSING' ? 'EXECUTED' : 'FAILED',
      operationId: debit.payoutId,
      reason: opening.reason,
      payout: { payoutId: debit.payoutId, ...payoutTiming(config) },
    };
  });
}

/**
 * The approver rejects the request (the approval workflow's step): as `rejectApproval`, and a held batch's run is
 * woken in the same transaction, to end the batch REJECTED at once rather than at the approval's deadline.
 */
export async function rejectHeldPayment(em: EntityManager, config: BatchExecutionConfig, requestId: string, decidedBy: string | null) {
  return em.transactional(async (tx) => {
    const outcome = await rejectApproval(tx, requestId, decidedBy);
    const request = (await findApproval(tx, requestId))!;
    const payment = heldPaymentOf(request);
    if (outcome === 'REJECTED' && payment.kind === 'BATCH') await wakeBatch(tx, config, { id: payment.batchId, tenantId: request.tenantId, accountId: request.accountId });
    return outcome;
  });
}
