import { Client } from '@temporalio/client';
import { loadConfigOrExit } from '../src/config.ts';
import { createLogger } from '../src/logger.ts';
import { openDatabase } from '../src/database.ts';
import { APPLICATION_NAMES } from '../src/persistence/orm.ts';
import { connectTemporal, ensureSearchAttributes } from '../src/temporal/connection.ts';
import { startHandOffReconciler } from '../src/handoff/reconciler.ts';
import { paymentContext } from '../src/payments/context.ts';
import { submitBeforeSettlementStarts } from '../src/pix/payout-submission.ts';
import { pixProvider } from '../src/pix/provider-factory.ts';
import { pixPayoutWorkflowType } from '../workflows/contracts/pix-payout.ts';
import { startOutboxRelay } from '../src/webhooks/relay.ts';
import { createWorker } from './worker.ts';

const config = loadConfigOrExit();
const logger = createLogger(config.LOG_LEVEL, 'worker');

const orm = await openDatabase(config.DATABASE_URL, config.DATABASE_POOL_MAX, APPLICATION_NAMES.worker);
const temporal = await connectTemporal(config);
const added = await ensureSearchAttributes(temporal.connection, config.TEMPORAL_NAMESPACE);
if (added.length > 0) logger.info({ searchAttributes: added }, 'search attributes registered');

// The payments the worker makes itself (a scheduled payment's occurrences) go through the api's use cases and queues.
const payments = paymentContext({ config, logger, orm, temporal });
const { worker, connection } = await createWorker({ config, orm, logger, payments });
// The reconciler's client shares the worker's connection, so the runs it starts are handed to this worker eagerly.
const workerClient = new Client({ connection, namespace: config.TEMPORAL_NAMESPACE });
const reconciler = startHandOffReconciler(orm, workerClient, config.TEMPORAL_TASK_QUEUE, logger, {
  colocatedWorker: true,
  beforeStart: { [pixPayoutWorkflowType]: submitBeforeSettlementStarts(orm, pixProvider(config, orm)) },
});
const relay = config.OUTBOX_RELAY ? startOutboxRelay(orm, config, logger, () => reconciler.wake()) : null;
logger.info({ taskQueue: config.TEMPORAL_TASK_QUEUE, namespace: config.TEMPORAL_NAMESPACE, temporal: config.TEMPORAL_ADDRESS }, 'worker started');
try {
  // The SDK runtime turns SIGINT/SIGTERM into a graceful shutdown: run() resolves once in-flight tasks finish.
  await worker.run();
} finally {
  await relay?.stop();
  await reconciler.stop();
  await temporal.connection.close();
  await connection.close();
  await orm.close();
  logger.info('worker stopped');
}
