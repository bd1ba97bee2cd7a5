import type { ActivityDeps } from './deps.ts';

export function probeActivities({ orm }: ActivityDeps) {
  return {
    async probeDatabase(): Promise<string> {
      const [row] = await orm.em.fork().execute<{ now: Date }[]>('select now() as now');
      return new Date(row!.now).toISOString();
    },
  };
}
export type ProbeActivities = ReturnType<typeof probeActivities>;
