import { pixProvider } from '../src/pix/provider-factory.ts';
import { debitUnconfirmedPayout, openPayout, refundPayout, reversePayout, settlePayout, submitPayout } from '../src/pix/payouts.ts';
import type { ProviderPayoutState } from '../src/pix/provider.ts';
import type { PayoutDebit } from '../workflows/contracts/pix-payout.ts';
import type { ActivityDeps } from './deps.ts';

export function pixPayoutActivities({ orm, config }: ActivityDeps) {
  const provider = pixProvider(config, orm);
  return {
    /** The request's debit, when the request could not tell whether it committed: the run is the one that continues. */
    debitPixPayout: (debit: PayoutDebit) => debitUnconfirmedPayout(orm.em.fork(), debit),
    /** Runs started before the debit moved into the request. */
    openPixPayout: (payoutId: string) => openPayout(orm.em.fork(), payoutId),
    submitPixPayout: (payoutId: string): Promise<void> => submitPayout(orm.em.fork(), provider, payoutId),
    queryPixPayout: (payoutId: string): Promise<ProviderPayoutState> => provider.queryPayout(payoutId),
    settlePixPayout: (payoutId: string, state: Extract<ProviderPayoutState, { state: 'POSTED' }>) => settlePayout(orm.em.fork(), payoutId, state),
    reversePixPayout: (payoutId: string, state: Extract<ProviderPayoutState, { state: 'FAILED' | 'CANCELLED' }>) => reversePayout(orm.em.fork(), payoutId, state),
    refundPixPayout: (payoutId: string, refund: { endToEndId: string; amountCents: string; refundedAt: string }) => refundPayout(orm.em.fork(), payoutId, refund),
  };
}
export type PixPayoutActivities = ReturnType<typeof pixPayoutActivities>;
