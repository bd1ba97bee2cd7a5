import pg from 'pg';
import { serve } from '../../http/server.ts';
import { createLogger } from '../../logger.ts';
import { PLATFORM_ISPB } from '../../shared/institution.ts';
import { createPspApp } from './app.ts';
import { loadPspConfigOrExit } from './config.ts';
import { startNotifier } from './notifier.ts';
import type { PspContext } from './psp.ts';

/**
 * The sandbox PSP process: the Pix provider the platform reaches over HTTP (`PIX_PROVIDER_URL`), standing for the whole
 * Pix network around it. Its state is in its own tables (`sandbox_psp_*`, created by the platform's migrations); all
 * it knows of the platform comes over HTTP, and it tells the platform what happened with signed notifications.
 */
const config = loadPspConfigOrExit();
const logger = createLogger(config.LOG_LEVEL, 'sandbox-psp');
const pool = new pg.Pool({ connectionString: config.DATABASE_URL, max: 5 });
pool.on('error', (err) => logger.error({ err }, 'database connection lost'));

const ctx: PspContext = { pool, platformUrl: config.notifyUrl, platformIspb: PLATFORM_ISPB, settleMs: config.SANDBOX_PIX_SETTLE_MS };
const server = await serve(createPspApp(ctx, { apiKey: config.PIX_PROVIDER_API_KEY, logger }), config.SANDBOX_PSP_PORT, config.HOST);
const notifier = startNotifier(ctx, { url: config.notifyUrl, secret: config.PIX_PROVIDER_WEBHOOK_SECRET, timeoutMs: config.SANDBOX_PSP_NOTIFY_TIMEOUT_MS, logger });
const address = server.address();
const port = typeof address === 'object' && address ? address.port : config.SANDBOX_PSP_PORT;
logger.info({ url: `http://${config.HOST}:${port}`, notifies: config.notifyUrl }, 'sandbox PSP listening');

let stopping = false;
async function stop(signal: string) {
  if (stopping) return;
  stopping = true;
  logger.info({ signal }, 'sandbox PSP stopping');
  await new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeIdleConnections();
  });
  await notifier.stop();
  await pool.end();
  logger.info('sandbox PSP stopped');
  process.exit(0);
}
process.on('SIGINT', () => void stop('SIGINT'));
process.on('SIGTERM', () => void stop('SIGTERM'));
