import { randomUUID } from 'node:crypto';
import { handOffUncertain, dispatchHandOff } from '../handoff/dispatch.ts';
import { definitelyRefused } from '../persistence/database-errors.ts';
import type { ServiceContext } from '../platform-context.ts';
import { DomainError, isRefusal, refusals } from '../shared/errors.ts';
import { derivedId } from '../shared/ids.ts';
import { within } from '../shared/time.ts';
import { tevResolutionStart, type SandboxTevOutcome, type TevOrigin, type TevOutcome, type TevSubmission } from '../../workflows/contracts/tev.ts';
import type { SettlementQueue } from './settlement-queue.ts';
import { SETTLE_TEV_REFUSALS, settleTev, type Settlement } from './settlement.ts';

export interface TevRequest {
  tenantId: string;
  sourceAccountId: string;
  destination: TevSubmission['destination'];
  amountCents: bigint;
  description: string | null;
  externalRef: string | null;
  idempotencyKey: string;
  origin: TevOrigin;
}

/** What a TEV request uses besides the platform: the request path's settlement queue, and the transfers whose outcome comes later (none in production). */
export interface TevContext extends ServiceContext {
  settlements: SettlementQueue;
  /** The transfers whose outcome comes later instead of at once, and how (the sandbox's ,97 and ,98, src/sandbox/tev-outcomes.ts). */
  deferredTevOutcome?: ((amountCents: bigint) => SandboxTevOutcome | null) | undefined;
}

export type TevResult =
  | { kind: 'done' | 'rejected'; outcome: TevOutcome }
  | { kind: 'submitted_unknown'; tevId: string; reason: string }
  /** The source is under dual approval: the caller holds the payment for its approver. */
  | { kind: 'approval_required'; destinationAccountId: string };

/** What a TEV request is answered with, once a held payment is out of the picture. */
export type TevAnswer = Exclude<TevResult, { kind: 'approval_required' }>;

/** The transfer id, from the source account and the idempotency key. */
export const tevIdFor = (pepper: string, sourceAccountId: string, idempotencyKey: string): string =>
  derivedId(pepper, 't', `tev:${sourceAccountId}:${idempotencyKey}`);

export const SUBMITTED_UNKNOWN_REASON =
  'The outcome is not known yet; the platform resolves it by itself. Follow GET /v1/tev/:id or the tev.out.* events.';


function resultOf(settled: Settlement): TevResult {
  switch (settled.code) {
    case 'DONE':
      return { kind: 'done', outcome: settled.outcome };
    case 'FAILED':
      return { kind: 'rejected', outcome: settled.outcome };
    case 'PROCESSING':
      return { kind: 'submitted_unknown', tevId: settled.tevId, reason: SUBMITTED_UNKNOWN_REASON };
    case 'APPROVAL_REQUIRED':
      return { kind: 'approval_required', destinationAccountId: settled.destinationId! };
    default:
      throw new DomainError(settled.code);
  }
}

/**
 * Records the transfer PROCESSING with its resolution's hand-off in one transaction; the workflow resolves it as
 * `outcome` says, after its delay.
 */
async function deferTev({ orm, config, temporal }: TevContext, submission: TevSubmission, outcome: SandboxTevOutcome): Promise<Settlement> {
  const em = orm.em.fork();
  const start = tevResolutionStart({ submission, sandbox: outcome });
  const settled = await settleTev(em, config, submission, 'DEFER', { handOff: { ...start, taskQueue: config.TEMPORAL_TASK_QUEUE } });
  if (settled.code === 'PROCESSING') {
    await dispatchHandOff(temporal.client, em, { key: start.workflowId, version: 1, taskQueue: config.TEMPORAL_TASK_QUEUE, start });
  }
  return settled;
}

/**
 * A TEV, synchronously: one database transaction settles it (`done`, or `rejected` with nothing moved). Only when the
 * outcome is not known in time (a lost connection, a statement timeout, the response deadline) does Temporal come in:
 * the answer is `submitted_unknown`, and the resolution workflow settles it or reads how it settled. An error the
 * settlement raises itself is known (nothing was written): 500, and no workflow.
 */
export async function submitTev(ctx: TevContext, request: TevRequest): Promise<TevResult> {
  const { orm, config, temporal, logger } = ctx;
  const submission: TevSubmission = {
    tevId: tevIdFor(config.KEY_PEPPER, request.sourceAccountId, request.idempotencyKey),
    tenantId: request.tenantId,
    sourceAccountId: request.sourceAccountId,
    destination: request.destination,
    amountCents: request.amountCents.toString(),
    description: request.description,
    externalRef: request.externalRef,
    endToEndId: randomUUID(),
    idempotencyKey: request.idempotencyKey,
    origin: request.origin,
  };
  const deferred = ctx.deferredTevOutcome?.(request.amountCents);
  if (deferred) return resultOf(await deferTev(ctx, submission, deferred));
  try {
    return resultOf(await within(ctx.settlements.settle(submission), config.TEV_RESPONSE_DEADLINE_MS));
  } catch (err) {
    if (isRefusal(err)) throw err;
    // The settlement refused the request itself (nothing was written): a known outcome, and one a workflow retrying
    // it would meet again. Only a lost connection, a timeout or the deadline leave the outcome unknown.
    if (definitelyRefused(err)) {
      logger.error({ err, tevId: submission.tevId }, 'TEV refused by the settlement function; nothing was written');
      throw new DomainError('TRANSFER_NOT_SETTLED');
    }
    logger.warn({ err, tevId: submission.tevId }, 'TEV outcome unknown; handing it to its resolution workflow');
    handOffUncertain(temporal.client, orm, config.TEMPORAL_TASK_QUEUE, tevResolutionStart({ submission, sandbox: null }), logger);
    return { kind: 'submitted_unknown', tevId: submission.tevId, reason: SUBMITTED_UNKNOWN_REASON };
  }
}
submitTev.raises = refusals(...SETTLE_TEV_REFUSALS, 'TRANSFER_NOT_SETTLED');
