import { expireCharge } from '../src/pix/charges.ts';
import type { ActivityDeps } from './deps.ts';

export function pixChargeActivities({ orm }: ActivityDeps) {
  return {
    /** ACTIVE → EXPIRED with its event; a paid or already expired charge is left as it is (so retries are harmless). */
    async expirePixCharge(chargeId: string) {
      return expireCharge(orm.em.fork(), chargeId);
    },
  };
}
export type PixChargeActivities = ReturnType<typeof pixChargeActivities>;
