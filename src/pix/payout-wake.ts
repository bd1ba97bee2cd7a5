import type { ServiceContext } from '../platform-context.ts';
import { startWorkflow } from '../temporal/workflow-start.ts';
import { payoutWake, type PayoutFinalState } from '../../workflows/contracts/pix-payout.ts';
import type { PixPayout } from './payout-store.ts';
import { payoutTiming } from './payouts.ts';

const WAKE_DEADLINE_MS = 5000;
const FINAL_STATES: readonly string[] = ['POSTED', 'FAILED', 'CANCELLED', 'REFUNDED'] satisfies PayoutFinalState[];

export const isFinalPayoutState = (state: string): state is PayoutFinalState => FINAL_STATES.includes(state);

/**
 * Tells a payout's settlement workflow that a notification made the payout final, so the run ends now instead of
 * asking the provider later. A signal-with-start (`payoutWake`): a run waiting in its delayed start runs at once. Sent
 * after the notification's transaction committed, and not awaited by the provider's request: a wake that does not
 * arrive (Temporal away) costs only the run's fallback query, which finds the outcome applied; a run that ended
 * already is not started again.
 */
export function wakePayoutWorkflow(
  { temporal, config, logger }: Pick<ServiceContext, 'temporal' | 'config' | 'logger'>,
  payout: Pick<PixPayout, 'id' | 'tenantId' | 'accountId'>,
  state: PayoutFinalState,
): void {
  const start = payoutWake({ payoutId: payout.id, tenantId: payout.tenantId, accountId: payout.accountId, timing: payoutTiming(config), state });
  void startWorkflow(temporal.client, config.TEMPORAL_TASK_QUEUE, start, { deadlineMs: WAKE_DEADLINE_MS }).catch((err: unknown) =>
    logger.debug({ err, payoutId: payout.id }, 'payout workflow not woken; its fallback query finds the outcome'),
  );
}
