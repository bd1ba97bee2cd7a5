import { sendChargeRefund } from '../src/pix/charge-settlement.ts';
import { expireCharge } from '../src/pix/charges.ts';
import { pixProvider } from '../src/pix/provider-factory.ts';
import type { ActivityDeps } from './deps.ts';

export function pixChargeActivities({ orm, config }: ActivityDeps) {
  const provider = pixProvider(config, orm);
  return {
    /** ACTIVE → EXPIRED with its event; a paid or already expired charge is left as it is (so retries are harmless). */
    async expirePixCharge(chargeId: string) {
      return expireCharge(orm.em.fork(), chargeId);
    },
    /** Sends a refund's devolução to the payer's institution; the provider takes each return once, so retries are harmless. */
    sendPixChargeRefund: (refundId: string): Promise<void> => sendChargeRefund(orm.em.fork(), provider, refundId),
  };
}
export type PixChargeActivities = ReturnType<typeof pixChargeActivities>;
