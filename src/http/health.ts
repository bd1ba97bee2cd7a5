import type { Services } from '../services.ts';
import type { HealthCheck } from './app.ts';

export function dependencyChecks({ orm, temporal }: Services): HealthCheck[] {
  return [
    { name: 'database', check: async () => void (await orm.em.fork().execute('select 1')) },
    { name: 'temporal', check: async () => void (await temporal.connection.workflowService.getSystemInfo({})) },
  ];
}
