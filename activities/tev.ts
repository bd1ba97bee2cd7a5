import { resolveTev } from '../src/transfers/settlement.ts';
import type { ActivityDeps } from './deps.ts';

export function tevActivities({ orm, config }: ActivityDeps) {
  return {
    /** Idempotent: a transfer already resolved returns its stored outcome. */
    resolveTev: (input: Parameters<typeof resolveTev>[2]) => resolveTev(orm.em.fork(), config, input),
  };
}
export type TevActivities = ReturnType<typeof tevActivities>;
