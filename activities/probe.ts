import { databaseNow } from '../src/persistence/clock.ts';
import type { ActivityDeps } from './deps.ts';

export function probeActivities({ orm }: ActivityDeps) {
  return {
    probeDatabase: () => databaseNow(orm.em.fork()),
  };
}
export type ProbeActivities = ReturnType<typeof probeActivities>;
