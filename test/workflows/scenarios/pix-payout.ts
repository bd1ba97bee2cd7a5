/** The Pix payout workflow's main branches, shared by its tests and the history recorder. */
import { randomUUID } from 'node:crypto';
import type { PixPayoutActivities } from '../../../activities/pix-payouts.ts';
import type { ProviderPayoutState } from '../../../src/pix/provider.ts';
import { startWorkflow } from '../../../src/temporal/workflow-start.ts';
import {
  payoutFinal,
  payoutWake,
  pixPayoutStart,
  submittedPayoutStart,
  type PayoutDebit,
  type PayoutFinalState,
  type PayoutOpening,
  type PixPayoutInput,
} from '../../../workflows/contracts/pix-payout.ts';
import type { ScenarioRun, WorkflowHarness } from '../support/harness.ts';
import { ActivityLog, inTurn } from '../support/stubs.ts';

export const settledAt = '2026-01-02T12:00:00.000Z';
export const PENDING: ProviderPayoutState = { state: 'PROCESSING' };
export const POSTED: ProviderPayoutState = { state: 'POSTED', endToEndId: 'E2E-POSTED', settledAt, refund: null };
export const REFUND = { endToEndId: 'E2E-REFUND', amountCents: '1500', refundedAt: '2026-01-02T12:05:00.000Z' };
export const FAILED: ProviderPayoutState = { state: 'FAILED', endToEndId: 'E2E-FAILED', reason: 'Conta destino encerrada' };

/** The debit's answer for a payout of R$ 15,00 with a R$ 1,00 fee. */
export const openingOf = (payoutId: string, rejected = false): PayoutOpening => ({
  payoutId,
  status: rejected ? 'REJECTED' : 'PROCESSING',
  amountCents: '1500',
  feeCents: '100',
  reason: rejected ? 'INSUFFICIENT_BALANCE' : null,
  createdAt: '2026-01-02T11:59:00.000Z',
});

/** A payment request whose debit's outcome the api could not tell. */
export const uncertainDebit = (payoutId: string): PayoutDebit => ({
  payoutId,
  tenantId: randomUUID(),
  accountId: randomUUID(),
  channel: 'PIX_OUT',
  amountCents: '1500',
  pixKey: 'joao@example.com',
  pixKeyType: 'EMAIL',
  beneficiary: { ispb: '99999999', name: 'João', document: '***.456.789-**', institution: 'Banco Sandbox S.A.', branch: '0001', account: '12345678', accountType: 'CACC' },
  qr: null,
  description: 'Pix enviado',
  idempotencyKey: 'k-1',
  requestHash: 'h-1',
});

/** The provider answers `states` to the queries in turn (the last one from then on). */
export function payoutStubs(log: ActivityLog, states: ProviderPayoutState[], options: { rejected?: boolean } = {}): PixPayoutActivities {
  const query = inTurn(...states);
  return log.record<PixPayoutActivities>({
    debitPixPayout: async (debit) => openingOf(debit.payoutId, options.rejected),
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
}

interface PayoutScenario {
  /** What the provider answers the fallback queries, in turn. */
  states?: ProviderPayoutState[];
  /** Signalled once the payout was submitted, as the platform does when a notification made it final. */
  notified?: PayoutFinalState;
  /** The api could not tell whether its debit committed: the run debits first. */
  uncertain?: boolean;
  rejected?: boolean;
  pollsPerRun?: number;
}

/** Starts the payout as the hand-off does (its debit done by the request, unless `uncertain`), then awaits its end. */
export async function followPayout(h: WorkflowHarness, scenario: PayoutScenario): Promise<PayoutRun> {
  const log = new ActivityLog();
  return h.withWorker(payoutStubs(log, scenario.states ?? [PENDING], { rejected: scenario.rejected }), async (taskQueue) => {
    const payoutId = `p${randomUUID()}`;
    const start = pixPayoutStart({ payoutId, tenantId: randomUUID(), accountId: randomUUID(), timing: { notificationWaitMs: 100, longestWaitMs: 400 }, ...(scenario.uncertain ? { debit: uncertainDebit(payoutId) } : {}) });
    if (scenario.pollsPerRun) start.args = [{ ...(start.args[0] as PixPayoutInput), pollsPerRun: scenario.pollsPerRun }];
    await startWorkflow(h.client, taskQueue, start);
    const handle = h.client.workflow.getHandle(start.workflowId);
    if (scenario.notified) {
      while (!log.names().includes('submitPixPayout')) await new Promise((resolve) => setTimeout(resolve, 10));
      await handle.signal(payoutFinal, scenario.notified);
    }
    const result = await handle.result();
    return { result, log, workflowIds: [start.workflowId], payoutId };
  });
}

export const payoutNotified = (h: WorkflowHarness) => followPayout(h, { notified: 'POSTED', states: [PENDING] });
export const payoutFallbackSettles = (h: WorkflowHarness) => followPayout(h, { states: [PENDING, PENDING, { ...POSTED, refund: REFUND }] });
export const payoutFallbackFails = (h: WorkflowHarness) => followPayout(h, { states: [PENDING, FAILED] });
export const payoutUncertainRejected = (h: WorkflowHarness) => followPayout(h, { uncertain: true, rejected: true });
export const payoutUncertainNotified = (h: WorkflowHarness) => followPayout(h, { uncertain: true, notified: 'FAILED' });
/** Two queries per run: the provider stays pending for two runs and settles in the third. */
export const payoutOutlastsRuns = (h: WorkflowHarness) => followPayout(h, { states: [PENDING, PENDING, PENDING, PENDING, POSTED], pollsPerRun: 2 });

interface SubmittedScenario {
  /** What the provider answers the fallback queries, in turn. */
  states?: ProviderPayoutState[];
  /** Woken this long after the start, as a notification that made the payout final does (signal-with-start). */
  wokenAfterMs?: number;
  notified?: PayoutFinalState;
}

/**
 * Starts the payout as the hand-off does once it has submitted it (`submittedPayoutStart`: the first task delayed by
 * `notificationWaitMs`), wakes it as a notification would, then awaits its end.
 */
export async function followSubmittedPayout(h: WorkflowHarness, scenario: SubmittedScenario): Promise<PayoutRun> {
  const log = new ActivityLog();
  return h.withWorker(payoutStubs(log, scenario.states ?? [PENDING]), async (taskQueue) => {
    const payoutId = `p${randomUUID()}`;
    const ids = { payoutId, tenantId: randomUUID(), accountId: randomUUID() };
    const timing = { notificationWaitMs: 1500, longestWaitMs: 3000 };
    const start = submittedPayoutStart(pixPayoutStart({ ...ids, timing }));
    await startWorkflow(h.client, taskQueue, start);
    if (scenario.notified) {
      await new Promise((resolve) => setTimeout(resolve, scenario.wokenAfterMs ?? 0));
      await startWorkflow(h.client, taskQueue, payoutWake({ ...ids, timing, state: scenario.notified }));
    }
    const result = await h.client.workflow.getHandle(start.workflowId).result();
    return { result, log, workflowIds: [start.workflowId], payoutId };
  });
}

export const submittedPayoutWoken = (h: WorkflowHarness) => followSubmittedPayout(h, { notified: 'POSTED', wokenAfterMs: 200 });
export const submittedPayoutAsks = (h: WorkflowHarness) => followSubmittedPayout(h, { states: [PENDING, FAILED] });
