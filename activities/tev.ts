import { postTev } from '../src/transfers/posting.ts';
import type { ActivityDeps } from './index.ts';

export function tevActivities({ orm, config }: ActivityDeps) {
  return {
    /** Idempotent: a transfer already resolved returns its stored outcome. */
    postTev: (tevId: string) => postTev(orm.em.fork(), config, tevId),
  };
}
export type TevActivities = ReturnType<typeof tevActivities>;
