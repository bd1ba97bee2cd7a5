import type { Server } from 'node:http';
import { loadConfigOrExit } from './config.ts';
import { openDatabase } from './database.ts';
import { createHolderApp } from './api/holder-app.ts';
import { createIntegrationApp } from './api/integration-app.ts';
import { serve } from './http/server.ts';
import { createLogger } from './logger.ts';
import { APPLICATION_NAMES, migrate } from './persistence/orm.ts';
import { paymentContext } from './payments/context.ts';
import { closePlatform, platformContext } from './platform-context.ts';

/** The api process: the holder API on PORT and the integration API on API_PORT. */
const config = loadConfigOrExit();
const logger = createLogger(config.LOG_LEVEL, 'api');
const platform = platformContext(config, logger, await openDatabase(config.DATABASE_URL, config.DATABASE_POOL_MAX, APPLICATION_NAMES.api));
if (config.NODE_ENV === 'development') await migrate(platform.orm, config.DATABASE_URL, logger);
// One of each posting queue for the process, shared by both apps. The sandbox's TEV outcomes (,97 and ,98) are loaded
// with SANDBOX=1 only: a production api runs no sandbox code.
const payments = paymentContext(platform, config.SANDBOX ? (await import('./sandbox/tev-outcomes.ts')).sandboxTevOutcomes(config) : undefined);

async function listen(name: string, app: ReturnType<typeof createHolderApp>, port: number): Promise<Server> {
  const server = await serve(app, port, config.HOST);
  const address = server.address();
  const bound = typeof address === 'object' && address ? address.port : port;
  logger.info({ url: `http://${config.HOST}:${bound}` }, `${name} listening`);
  return server;
}

const servers = [
  await listen('holder API', createHolderApp(payments), config.PORT),
  await listen('integration API', createIntegrationApp(payments), config.API_PORT),
];

let stopping = false;
async function stop(signal: string) {
  if (stopping) return;
  stopping = true;
  logger.info({ signal }, 'api stopping');
  await Promise.all(servers.map((s) => new Promise<void>((resolve) => { s.close(() => resolve()); s.closeIdleConnections(); })));
  await closePlatform(platform);
  logger.info('api stopped');
  process.exit(0);
}
process.on('SIGINT', () => void stop('SIGINT'));
process.on('SIGTERM', () => void stop('SIGTERM'));
