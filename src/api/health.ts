import type { PlatformContext } from '../platform-context.ts';
import { within } from '../shared/time.ts';
import type { HealthCheck } from '../http/app.ts';

const HEALTH_DEADLINE_MS = 2000;

export function dependencyChecks({ orm, temporal }: PlatformContext): HealthCheck[] {
  return [
    { name: 'database', check: async () => void (await within(orm.em.fork().execute('select 1'), HEALTH_DEADLINE_MS, 'PostgreSQL does not answer')) },
    {
      name: 'temporal',
      check: async () => {
        try {
          await temporal.connection.withDeadline(Date.now() + HEALTH_DEADLINE_MS, () => temporal.connection.workflowService.getSystemInfo({}));
        } catch {
          throw new Error('Temporal is unreachable; payments are accepted and handed to their workflows once it is back');
        }
      },
    },
  ];
}
