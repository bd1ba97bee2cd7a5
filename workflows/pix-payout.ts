import { allHandlersFinished, condition, continueAsNew, patched, proxyActivities, proxyLocalActivities, setHandler, sleep } from '@temporalio/workflow';
import type { PixPayoutActivities } from '../activities/pix-payouts.ts';
import type { ProviderPayoutState } from '../src/pix/provider.ts';
import { payoutFinal, payoutOpened, type PayoutFinalState, type PayoutFollowUp, type PayoutOpening, type PixPayoutInput } from './contracts/pix-payout.ts';
import { LOCAL_DATABASE_STEP, LOCAL_PROVIDER_CALL, PROVIDER_CALL } from './activity-options.ts';

const { openPixPayout, debitPixPayout } = proxyLocalActivities<PixPayoutActivities>(LOCAL_DATABASE_STEP);
const provider = proxyActivities<PixPayoutActivities>(PROVIDER_CALL);
const { submitPixPayout: submitInWorker } = proxyLocalActivities<PixPayoutActivities>(LOCAL_PROVIDER_CALL);

/** Provider queries per run: while the provider is slow the run continues as new, so no history grows without bound. */
export const PAYOUT_POLLS_PER_RUN = 100;

/** Fallback queries made `notificationWaitMs` apart before the waits start doubling. */
const SHORT_WAITS = 3;
const DEFAULT_NOTIFICATION_WAIT_MS = 15_000;
const DEFAULT_LONGEST_WAIT_MS = 600_000;

/** The longest wait between two refund checks of a settled payout (runs that polled). */
const LONGEST_REFUND_WAIT_MS = 60_000;

/** Runs started before continue-as-new have no marker of this patch: replayed, they keep polling in one run, as recorded. */
const BOUNDED_HISTORY_PATCH = 'pix-payout-continue-as-new';

/**
 * Runs started before the payout waited for the provider's notifications have no marker of this patch: replayed, they
 * debit, poll and watch for a refund, as recorded.
 */
const WAITS_FOR_NOTIFICATION_PATCH = 'pix-payout-waits-for-notification';

/**
 * One Pix payout from submission to final state. The request debited it already (or, when it could not tell, the run
 * debits it first). The run submits it to the provider, unless the hand-off did before starting it (`submitted`: the
 * run's first task then waits for the notification, see `submittedPayoutStart`), then waits for the provider's
 * notification, which the platform applies and signals (`payoutFinal`): the run ends. Only when no notification comes in time does it ask the
 * provider: `SHORT_WAITS` times `notificationWaitMs` apart, then doubling up to `longestWaitMs`. Once the payout is
 * POSTED, FAILED or CANCELLED nothing runs for it: a later return (devolução) arrives as a notification of its own.
 */
export async function pixPayoutWorkflow(input: PixPayoutInput): Promise<string> {
  if (!patched(WAITS_FOR_NOTIFICATION_PATCH)) return followByPolling(input);
  let final: PayoutFinalState | undefined;
  setHandler(payoutFinal, (state) => {
    final ??= state;
  });

  if (input.debit) {
    const opening = await debitPixPayout(input.debit);
    if (opening.status === 'REJECTED') return 'REJECTED';
  }
  // A run that continues one that polled (started before this patch) was submitted already.
  if (input.resume?.followUp.phase === 'WATCHING_REFUND') return 'POSTED';
  if (!input.resume && !input.waiting && !input.submitted) await submitInWorker(input.payoutId);

  const shortWait = input.notificationWaitMs ?? DEFAULT_NOTIFICATION_WAIT_MS;
  const longestWait = input.longestWaitMs ?? DEFAULT_LONGEST_WAIT_MS;
  const waitBefore = (asks: number) => Math.min(shortWait * 2 ** Math.max(0, asks - SHORT_WAITS), longestWait);
  const pollsPerRun = input.pollsPerRun ?? PAYOUT_POLLS_PER_RUN;
  const firstAsk = input.waiting?.asks ?? 0;
  for (let asks = firstAsk; asks < firstAsk + pollsPerRun; asks++) {
    // Submitted by the hand-off, the run's start waited for the notification: woken by it, or asking now.
    const waitedAtStart = input.submitted && asks === firstAsk;
    if (waitedAtStart ? final !== undefined : await condition(() => final !== undefined, waitBefore(asks))) return final!;
    const state = await provider.queryPixPayout(input.payoutId);
    if (state.state !== 'PROCESSING') return applyProviderState(input.payoutId, state);
  }
  await condition(allHandlersFinished);
  const { debit: _debit, resume: _resume, submitted: _submitted, ...rest } = input;
  return continueAsNew<typeof pixPayoutWorkflow>({ ...rest, waiting: { asks: firstAsk + pollsPerRun } });
}

/** What the fallback query found, applied as a notification would have (each step finds nothing to do if it was). */
async function applyProviderState(payoutId: string, state: Exclude<ProviderPayoutState, { state: 'PROCESSING' }>): Promise<PayoutFinalState> {
  if (state.state !== 'POSTED') {
    await provider.reversePixPayout(payoutId, state);
    return state.state;
  }
  await provider.settlePixPayout(payoutId, state);
  if (!state.refund) return 'POSTED';
  await provider.refundPixPayout(payoutId, state.refund);
  return 'REFUNDED';
}

/**
 * How runs started before `WAITS_FOR_NOTIFICATION_PATCH` went: debit (early return to the caller), submit, poll the
 * provider to POSTED, FAILED or CANCELLED, then keep watching a settled payout for a refund until `refundWatchMs`
 * passes. After `pollsPerRun` provider queries the run continues as new from where it stands.
 */
async function followByPolling(input: PixPayoutInput): Promise<string> {
  const pollMs = input.pollMs!;
  const pollsPerRun = patched(BOUNDED_HISTORY_PATCH) ? (input.pollsPerRun ?? PAYOUT_POLLS_PER_RUN) : Infinity;
  let opening: PayoutOpening | undefined = input.resume?.opening;
  setHandler(payoutOpened, async () => {
    await condition(() => opening !== undefined);
    return opening!;
  });

  let followUp: PayoutFollowUp | undefined = input.resume?.followUp;
  if (!followUp) {
    opening = await openPixPayout(input.payoutId);
    await condition(allHandlersFinished);
    if (opening.status === 'REJECTED') return 'REJECTED';
    await provider.submitPixPayout(input.payoutId);
    followUp = { phase: 'SETTLING' };
  }

  for (let polls = 0; ; polls++) {
    if (followUp.phase === 'WATCHING_REFUND' && Date.now() - Date.parse(followUp.settledAt) >= input.refundWatchMs!) return 'POSTED';
    if (polls === pollsPerRun) break;
    const state = await provider.queryPixPayout(input.payoutId);
    if (followUp.phase === 'SETTLING') {
      if (state.state === 'FAILED' || state.state === 'CANCELLED') {
        await provider.reversePixPayout(input.payoutId, state);
        return state.state;
      }
      if (state.state === 'POSTED') {
        await provider.settlePixPayout(input.payoutId, state);
        // The first refund check follows at once.
        followUp = { phase: 'WATCHING_REFUND', settledAt: new Date().toISOString(), nextWaitMs: pollMs };
      } else {
        await sleep(pollMs);
      }
    } else {
      if (state.state === 'POSTED' && state.refund) {
        await provider.refundPixPayout(input.payoutId, state.refund);
        return 'REFUNDED';
      }
      await sleep(followUp.nextWaitMs);
      followUp = { ...followUp, nextWaitMs: Math.min(followUp.nextWaitMs * 2, LONGEST_REFUND_WAIT_MS) };
    }
  }
  await condition(allHandlersFinished);
  return continueAsNew<typeof pixPayoutWorkflow>({ ...input, resume: { opening: opening!, followUp } });
}
