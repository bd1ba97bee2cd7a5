import { allHandlersFinished, condition, continueAsNew, patched, proxyActivities, proxyLocalActivities, setHandler, sleep } from '@temporalio/workflow';
import type { PixPayoutActivities } from '../activities/pix-payouts.ts';
import { payoutOpened, type PayoutFollowUp, type PayoutOpening, type PixPayoutInput } from './contracts/pix-payout.ts';
import { LOCAL_DATABASE_STEP, PROVIDER_CALL } from './activity-options.ts';

const { openPixPayout } = proxyLocalActivities<PixPayoutActivities>(LOCAL_DATABASE_STEP);
const provider = proxyActivities<PixPayoutActivities>(PROVIDER_CALL);

/** Provider queries per run: while the provider is slow the run continues as new, so no history grows without bound. */
export const PAYOUT_POLLS_PER_RUN = 100;

/** The longest wait between two refund checks of a settled payout. */
const LONGEST_REFUND_WAIT_MS = 60_000;

/** Runs started before continue-as-new have no marker of this patch: replayed, they keep polling in one run, as recorded. */
const BOUNDED_HISTORY_PATCH = 'pix-payout-continue-as-new';

/**
 * One Pix payout from debit to final state: debit (early return to the caller), submit to the provider, follow it to
 * POSTED, FAILED or CANCELLED, then keep watching a settled payout for a refund until `refundWatchMs` passes. After
 * `pollsPerRun` provider queries the run continues as new from where it stands.
 */
export async function pixPayoutWorkflow(input: PixPayoutInput): Promise<string> {
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
    if (followUp.phase === 'WATCHING_REFUND' && Date.now() - Date.parse(followUp.settledAt) >= input.refundWatchMs) return 'POSTED';
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
        followUp = { phase: 'WATCHING_REFUND', settledAt: new Date().toISOString(), nextWaitMs: input.pollMs };
      } else {
        await sleep(input.pollMs);
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
