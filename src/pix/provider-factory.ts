import type { Config } from '../config.ts';
import type { Orm } from '../persistence/orm.ts';
import { httpPixProvider } from './http-provider.ts';
import type { PixProvider } from './provider.ts';

/** The Pix provider in use: the PSP's API over HTTP at PIX_PROVIDER_URL (the sandbox PSP service, or a real PSP). */
export function pixProvider(config: Config, orm: Orm): PixProvider {
  return httpPixProvider(() => orm.em.fork(), {
    url: config.PIX_PROVIDER_URL,
    apiKey: config.PIX_PROVIDER_API_KEY,
    timeoutMs: config.PIX_PROVIDER_TIMEOUT_MS,
    publicBaseUrl: config.publicBaseUrl,
    allowedHosts: config.PIX_LOCATION_ALLOWED_HOSTS,
    readPublicHosts: !config.SANDBOX,
  });
}
