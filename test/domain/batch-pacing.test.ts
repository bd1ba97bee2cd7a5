/**
 * A batch payout's step gives way to the api's request path (issue 26: the holders' TEVs keep their latency while a
 * batch runs): while a connection of the api is posting, a step pays at most BATCH_YIELD_CHUNK items and pauses
 * BATCH_YIELD_MS after. The test database is shared with other files' platforms, so only the busy case is asserted: a
 * step alone may meet another file's api posting too.
 */
import { randomUUID } from 'node:crypto';
import { expect, test } from '@jest/globals';
import pg from 'pg';
import { Account } from '../../src/accounts/entities.ts';
import { payNextChunk, startBatch } from '../../src/batches/execution.ts';
import { recordBatch } from '../../src/batches/service.ts';
import type { BatchItemRequest } from '../../src/batches/validation.ts';
import { APPLICATION_NAMES } from '../../src/persistence/orm.ts';
import { sql } from '../support/db.ts';
import { domainDatabase, fund, onboardedHolder } from './support/accounts.ts';

const db = domainDatabase();
const config = {
  TEV_MAX_AMOUNT_CENTS: 1_000_000n,
  KEY_PEPPER: 'test-pepper',
  APPROVAL_TTL_MS: 60_000,
  TEMPORAL_TASK_QUEUE: `test-${randomUUID()}`,
  BATCH_CHUNK_SIZE: 100,
  BATCH_PIX_IN_FLIGHT: 10,
  BATCH_YIELD_CHUNK: 7,
  BATCH_YIELD_PIX_IN_FLIGHT: 5,
  BATCH_YIELD_MS: 300,
  PIX_NOTIFICATION_WAIT_MS: 15_000,
  PIX_QUERY_MAX_WAIT_MS: 600_000,
};
const directory = { resolveKey: async () => null };

test('while the api posts a TEV, a step pays BATCH_YIELD_CHUNK items and pauses BATCH_YIELD_MS; the batch still ends, each item paid once', async () => {
  const em = db.em();
  const tenantId = await db.tenant();
  const [payer, payee] = await Promise.all([onboardedHolder(em, tenantId, 'Maria Pagadora'), onboardedHolder(em, tenantId, 'João Recebedor')]);
  await fund(em, tenantId, payer.accountId, 100_000n);
  const account = await db.em().findOneOrFail(Account, { id: payer.accountId });
  const items: BatchItemRequest[] = Array.from({ length: 20 }, (_, n) => ({ kind: 'TEV', externalRef: `e-${n}`, amountCents: 100n, description: null, branch: payee.agency, account: payee.number }));
  const batch = await recordBatch(db.em(), config, directory, { account, idempotencyKey: randomUUID(), items });
  expect(await startBatch(db.em(), batch.batchId)).toEqual({ kind: 'PAY' });

  // A connection named as the api's, in the middle of a posting (its statement names settle_tev).
  const api = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL, application_name: APPLICATION_NAMES.api });
  await api.connect();
  const posting = api.query('select pg_sleep(5) /* settle_tev */');
  try {
    await new Promise((resolve) => setTimeout(resolve, 200));
    const started = Date.now();
    expect(await payNextChunk(db.em(), config, batch.batchId, 100, 10)).toEqual({ paid: 7, processing: 0, finished: null });
    expect(Date.now() - started).toBeGreaterThanOrEqual(config.BATCH_YIELD_MS);
  } finally {
    await sql('select pg_cancel_backend(pid) from pg_stat_activity where application_name = $1 and query like $2', [APPLICATION_NAMES.api, '%pg_sleep(5)%']);
    await posting.catch(() => undefined);
    await api.end();
  }

  let progress;
  do progress = await payNextChunk(db.em(), config, batch.batchId, 100, 10);
  while (!progress.finished);
  expect(progress.finished).toBe('FINISHED');
  const paid = await sql<{ n: number }>(`select count(*)::int as n from tev_transfer where tenant_id = $1 and status = 'DONE' and idempotency_key like $2`, [tenantId, `batch:${batch.batchId}:%`]);
  expect(paid).toEqual([{ n: 20 }]);
});
