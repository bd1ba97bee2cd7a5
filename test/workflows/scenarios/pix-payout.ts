/** The Pix payout workflow's main branches, shared by its tests and the history recorder. */
import { randomUUID } from 'node:crypto';
import type { PixPayoutActivities } from '../../../activities/pix-payouts.ts';
import type { ProviderPayoutState } from '../../../src/pix/provider.ts';
import { executeUpdateWithStart } from '../../../src/temporal/workflow-start.ts';
import { payoutOpened, pixPayoutStart, type PayoutOpening, type PixPayoutInput } from '../../../workflows/contracts/pix-payout.ts';
import type { ScenarioRun, WorkflowHarness } from '../support/harness.ts';
import { ActivityLog, inTurn } from '../support/stubs.ts';

export const settledAt = '2026-01-02T12:00:00.000Z';
export const PENDING: ProviderPayoutState = { state: 'PROCESSING' };
export const POSTED: ProviderPayoutState = { state: 'POSTED', endToEndId: 'E2E-POSTED', settledAt, refund: null };
export const REFUND = { endToEndId: 'E2E-REFUND', amountCents: '1500', refundedAt: '2026-01-02T12:05:00.000Z' };

/** The debit's answer for a payout of R$ 15,00 with a R$ 1,00 fee. */
export const openingOf = (payoutId: string, rejected = false): PayoutOpening => ({
  payoutId,
  status: rejected ? 'REJECTED' : 'PROCESSING',
  amountCents: '1500',
  feeCents: '100',
  reason: rejected ? 'INSUFFICIENT_BALANCE' : null,
  createdAt: '2026-01-02T11:59:00.000Z',
});

/** The provider answers `states` to the queries in turn (the last one from then on). */
export function payoutStubs(log: ActivityLog, states: ProviderPayoutState[], options: { rejected?: boolean } = {}): PixPayoutActivities {
  const query = inTurn(...states);
  return log.record<PixPayoutActivities>({
    openPixPayout: async (payoutId) => openingOf(payoutId, options.rejected),
    submitPixPayout: async () => undefined,
    queryPixPayout: () => query(),
    settlePixPayout: async () => undefined,
    reversePixPayout: async () => undefined,
    refundPixPayout: async () => undefined,
  });
}

export interface PayoutRun extends ScenarioRun<string> {
  payoutId: string;
  /** What `payoutOpened` answered the payment request. */
  opening: PayoutOpening;
}

interface PayoutScenario {
  states: ProviderPayoutState[];
  rejected?: boolean;
  refundWatchMs?: number;
  pollsPerRun?: number;
}

/** Starts the payout as the payment endpoint does (Update-with-Start, waiting for the debit), then awaits its end. */
export async function followPayout(h: WorkflowHarness, scenario: PayoutScenario): Promise<PayoutRun> {
  const log = new ActivityLog();
  return h.withWorker(payoutStubs(log, scenario.states, { rejected: scenario.rejected }), async (taskQueue) => {
    const payoutId = `p${randomUUID()}`;
    const input: PixPayoutInput = { payoutId, pollMs: 50, refundWatchMs: scenario.refundWatchMs ?? 300 };
    if (scenario.pollsPerRun) input.pollsPerRun = scenario.pollsPerRun;
    const start = { ...pixPayoutStart({ ...input, tenantId: randomUUID(), accountId: randomUUID() }), args: [input] };
    const opening = await executeUpdateWithStart(h.client, taskQueue, start, payoutOpened, 10_000);
    const result = await h.client.workflow.getHandle(start.workflowId).result();
    return { result, log, workflowIds: [start.workflowId], payoutId, opening };
  });
}

export const payoutRejected = (h: WorkflowHarness) => followPayout(h, { states: [], rejected: true });
export const payoutSettles = (h: WorkflowHarness) => followPayout(h, { states: [PENDING, PENDING, PENDING, POSTED] });
export const payoutRefunded = (h: WorkflowHarness) => followPayout(h, { states: [PENDING, POSTED, POSTED, { ...POSTED, refund: REFUND }], refundWatchMs: 60_000 });
export const payoutFails = (h: WorkflowHarness, state: 'FAILED' | 'CANCELLED') =>
  followPayout(h, { states: [PENDING, { state, endToEndId: 'E2E-FAILED', reason: 'Conta destino encerrada' }] });
/**
 * Three queries per run: the provider stays pending for two runs and settles in the third, whose refund watch goes on
 * in a fourth, where the refund comes.
 */
export const payoutOutlastsRuns = (h: WorkflowHarness) =>
  followPayout(h, { states: [...Array<ProviderPayoutState>(7).fill(PENDING), POSTED, POSTED, POSTED, { ...POSTED, refund: REFUND }], refundWatchMs: 60_000, pollsPerRun: 3 });
