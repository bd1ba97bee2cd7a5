import type { BeforeStart } from '../handoff/reconciler.ts';
import type { Orm } from '../persistence/orm.ts';
import { submittedPayoutStart, type PixPayoutInput } from '../../workflows/contracts/pix-payout.ts';
import { submitPayout } from './payouts.ts';
import type { PixProvider } from './provider.ts';

/**
 * The hand-off's step before a debited payout's settlement run starts: the worker's reconciler submits the payout to
 * the provider (idempotent there by payout id), then starts the run to wait for the provider's notification
 * (`submittedPayoutStart`). A payout settled by its notification then costs Temporal one start, one signal and one
 * workflow task. A provider that is down keeps the hand-off row, tried again seconds apart: the payout's submission
 * waits, and is never lost. A run that must debit first (the request could not tell whether it did) submits itself.
 */
export function submitBeforeSettlementStarts(orm: Orm, provider: Pick<PixProvider, 'submitPayout'>): BeforeStart {
  return async (start) => {
    const input = start.args[0] as PixPayoutInput;
    if (input.debit || input.submitted) return start;
    await submitPayout(orm.em.fork(), provider, input.payoutId);
    return submittedPayoutStart(start);
  };
}
