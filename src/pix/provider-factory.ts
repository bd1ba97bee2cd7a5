import type { Config } from '../config.ts';
import type { Orm } from '../persistence/orm.ts';
import type { PixProvider } from './provider.ts';
import { sandboxPsp } from './sandbox-psp.ts';

/** The Pix provider in use. Only the sandbox PSP ships; a real PSP adapter would be chosen here by configuration. */
export function pixProvider(config: Config, orm: Orm): PixProvider {
  return sandboxPsp(() => orm.em.fork(), {
    settleMs: config.SANDBOX_PIX_SETTLE_MS,
    publicBaseUrl: config.publicBaseUrl,
    taskQueue: config.TEMPORAL_TASK_QUEUE,
    allowedHosts: config.PIX_LOCATION_ALLOWED_HOSTS,
    readPublicHosts: !config.SANDBOX,
  });
}
