import { pixProvider } from '../src/pix/provider-factory.ts';
import { openPayout, payoutSubmission, refundPayout, reversePayout, settlePayout } from '../src/pix/payouts.ts';
import type { ProviderPayoutState } from '../src/pix/provider.ts';
import type { ActivityDeps } from './deps.ts';

export function pixPayoutActivities({ orm, config }: ActivityDeps) {
  const provider = pixProvider(config, orm);
  return {
    openPixPayout: (payoutId: string) => openPayout(orm.em.fork(), payoutId),
    submitPixPayout: async (payoutId: string): Promise<void> => provider.submitPayout(await payoutSubmission(orm.em.fork(), payoutId)),
    queryPixPayout: (payoutId: string): Promise<ProviderPayoutState> => provider.queryPayout(payoutId),
    settlePixPayout: (payoutId: string, state: Extract<ProviderPayoutState, { state: 'POSTED' }>) => settlePayout(orm.em.fork(), payoutId, state),
    reversePixPayout: (payoutId: string, state: Extract<ProviderPayoutState, { state: 'FAILED' | 'CANCELLED' }>) => reversePayout(orm.em.fork(), payoutId, state),
    refundPixPayout: (payoutId: string, refund: { endToEndId: string; amountCents: string; refundedAt: string }) => refundPayout(orm.em.fork(), payoutId, refund),
  };
}
export type PixPayoutActivities = ReturnType<typeof pixPayoutActivities>;
