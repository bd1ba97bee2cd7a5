import { ApplicationFailure } from '@temporalio/common';
import { definitelyRefused } from '../src/persistence/database-errors.ts';
import { resolveTev } from '../src/transfers/settlement.ts';
import type { ActivityDeps } from './deps.ts';

export function tevActivities({ orm, config, logger }: ActivityDeps) {
  return {
    /**
     * Idempotent: a transfer already resolved returns its stored outcome. Retried while the database may heal (a lost
     * connection, a timeout); an error the settlement raises itself would come back on every try, so the run fails
     * at once, as a failed workflow in the UI and an error in the worker's log, with nothing written.
     */
    resolveTev: async (input: Parameters<typeof resolveTev>[2]) => {
      try {
        return await resolveTev(orm.em.fork(), config, input);
      } catch (err) {
        if (!definitelyRefused(err)) throw err;
        logger.error({ err, tevId: input.submission.tevId }, 'TEV resolution refused by the settlement function; nothing was written');
        throw ApplicationFailure.create({ type: 'SettlementRefused', message: `settle_tev refused the transfer: ${err.message}`, nonRetryable: true });
      }
    },
  };
}
export type TevActivities = ReturnType<typeof tevActivities>;
