import type { ServiceContext } from '../platform-context.ts';
import { PixDebitQueue } from '../pix/payout-debits.ts';
import type { PixProvider } from '../pix/provider.ts';
import { pixProvider } from '../pix/provider-factory.ts';
import type { TevContext } from '../transfers/service.ts';
import { SettlementQueue } from '../transfers/settlement-queue.ts';

/**
 * What the payment use cases use besides the platform, made once per process that pays (the api, shared by both
 * apps; the worker, for its scheduled payments): the posting queues (so `TEV_BATCH_LANES` and `PIX_BATCH_LANES` bound
 * the process), the TEVs whose outcome comes later (`TevContext`) and the Pix provider.
 */
export interface PaymentContext extends TevContext {
  /** The request path's Pix debits, batched under load. */
  pixDebits: PixDebitQueue;
  pixProvider: PixProvider;
}

export function paymentContext<P extends ServiceContext>(platform: P, deferredTevOutcome?: TevContext['deferredTevOutcome']): P & PaymentContext {
  const { config, orm } = platform;
  return {
    ...platform,
    settlements: new SettlementQueue(orm.em, config),
    deferredTevOutcome,
    pixDebits: new PixDebitQueue(orm.em, config),
    pixProvider: pixProvider(config, orm),
  };
}
