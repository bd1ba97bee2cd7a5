import { allHandlersFinished, condition, proxyActivities, proxyLocalActivities, setHandler, sleep } from '@temporalio/workflow';
import type { PixPayoutActivities } from '../activities/pix-payouts.ts';
import { payoutOpened, type PayoutOpening, type PixPayoutInput } from './contracts/pix-payout.ts';
import { LOCAL_DATABASE_STEP, PROVIDER_CALL } from './activity-options.ts';

const { openPixPayout } = proxyLocalActivities<PixPayoutActivities>(LOCAL_DATABASE_STEP);
const provider = proxyActivities<PixPayoutActivities>(PROVIDER_CALL);

/**
 * One Pix payout from debit to final state: debit (early return to the caller), submit to the provider, follow it to
 * POSTED, FAILED or CANCELLED, then keep watching a settled payout for a refund until `refundWatchMs` passes.
 */
export async function pixPayoutWorkflow(input: PixPayoutInput): Promise<string> {
  let opening: PayoutOpening | undefined;
  setHandler(payoutOpened, async () => {
    await condition(() => opening !== undefined);
    return opening!;
  });
  opening = await openPixPayout(input.payoutId);
  await condition(allHandlersFinished);
  if (opening.status === 'REJECTED') return 'REJECTED';

  await provider.submitPixPayout(input.payoutId);
  for (;;) {
    const state = await provider.queryPixPayout(input.payoutId);
    if (state.state === 'FAILED' || state.state === 'CANCELLED') {
      await provider.reversePixPayout(input.payoutId, state);
      return state.state;
    }
    if (state.state === 'POSTED') {
      await provider.settlePixPayout(input.payoutId, state);
      break;
    }
    await sleep(input.pollMs);
  }
  const settledAt = Date.now();
  for (let wait = input.pollMs; Date.now() - settledAt < input.refundWatchMs; wait = Math.min(wait * 2, 60_000)) {
    const state = await provider.queryPixPayout(input.payoutId);
    if (state.state === 'POSTED' && state.refund) {
      await provider.refundPixPayout(input.payoutId, state.refund);
      return 'REFUNDED';
    }
    await sleep(wait);
  }
  return 'POSTED';
}
