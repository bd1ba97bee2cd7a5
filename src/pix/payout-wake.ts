import type { Client } from '@temporalio/client';
import type { Logger } from 'pino';
import { payoutFinal, pixPayoutWorkflowId, type PayoutFinalState } from '../../workflows/contracts/pix-payout.ts';

const WAKE_DEADLINE_MS = 5000;
const FINAL_STATES: readonly string[] = ['POSTED', 'FAILED', 'CANCELLED', 'REFUNDED'] satisfies PayoutFinalState[];

export const isFinalPayoutState = (state: string): state is PayoutFinalState => FINAL_STATES.includes(state);

/**
 * Tells a payout's settlement workflow that a notification made the payout final, so the run ends now instead of
 * asking the provider later. Sent after the notification's transaction committed, and not awaited by the provider's
 * request: a signal that does not arrive (Temporal away, the run ended already) costs only the run's fallback query,
 * which finds the outcome applied.
 */
export function wakePayoutWorkflow(client: Client, logger: Logger, payoutId: string, state: PayoutFinalState): void {
  void client
    .withDeadline(Date.now() + WAKE_DEADLINE_MS, () => client.workflow.getHandle(pixPayoutWorkflowId(payoutId)).signal(payoutFinal, state))
    .catch((err: unknown) => logger.debug({ err, payoutId }, 'payout workflow not woken; its fallback query finds the outcome'));
}
