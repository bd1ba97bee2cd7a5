import type { Server } from 'node:http';
import { loadConfigOrExit } from './config.ts';
import { createHolderApp } from './http/holder-app.ts';
import { createIntegrationApp } from './http/integration-app.ts';
import { serve } from './http/server.ts';
import { createLogger } from './logger.ts';
import { migrate } from './persistence/orm.ts';
import { closeServices, openServices } from './services.ts';

/** The api process: the holder API on PORT and the integration API on API_PORT. */
const config = loadConfigOrExit();
const logger = createLogger(config.LOG_LEVEL, 'api');
// The sandbox's TEV outcomes, loaded with SANDBOX=1 only: a production api runs no sandbox code.
const deferredTevOutcome = config.SANDBOX ? (await import('./sandbox/tev-outcomes.ts')).sandboxTevOutcomes(config) : undefined;
const services = await openServices(config, logger, deferredTevOutcome);
if (config.NODE_ENV === 'development') await migrate(services.orm, config.DATABASE_URL, logger);

async function listen(name: string, app: ReturnType<typeof createHolderApp>, port: number): Promise<Server> {
  const server = await serve(app, port, config.HOST);
  const address = server.address();
  const bound = typeof address === 'object' && address ? address.port : port;
  logger.info({ url: `http://${config.HOST}:${bound}` }, `${name} listening`);
  return server;
}

const servers = [
  await listen('holder API', createHolderApp(services), config.PORT),
  await listen('integration API', createIntegrationApp(services), config.API_PORT),
];

let stopping = false;
async function stop(signal: string) {
  if (stopping) return;
  stopping = true;
  logger.info({ signal }, 'api stopping');
  await Promise.all(servers.map((s) => new Promise<void>((resolve) => { s.close(() => resolve()); s.closeIdleConnections(); })));
  await closeServices(services);
  logger.info('api stopped');
  process.exit(0);
}
process.on('SIGINT', () => void stop('SIGINT'));
process.on('SIGTERM', () => void stop('SIGTERM'));
