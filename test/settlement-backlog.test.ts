import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import pg from 'pg';
import { admin, adminOk } from './support/admin.ts';
import { closeDb, sql } from './support/db.ts';
import { fund, newTenant, onboarded, tenantHeaders, waitFor, type Onboarded } from './support/fixtures.ts';
import { http } from './support/http.ts';
import { balanceOf, expectLedgerConsistent } from './support/ledger.ts';
import { startPlatform, type Platform } from './support/platform.ts';

// Other test files share the database and may have payouts and hand-offs of their own in flight: platform-wide
// figures are checked as bounds, this file's tenant exactly.
let platform: Platform;
let tenantId: string;
let alice: Onboarded;
beforeAll(async () => {
  platform = await startPlatform({ SANDBOX_PIX_SETTLE_MS: '400' });
  tenantId = await newTenant(platform);
  alice = await onboarded(platform, tenantId);
  await fund(platform, tenantId, alice.account.id, 100_000);
}, 90_000);
afterAll(async () => {
  await expectLedgerConsistent(tenantId);
  await platform?.stop();
  await closeDb();
});

const payKey = (amount: number) =>
  http('POST', `${platform.holderUrl}/pix/payment`, {
    body: { accountId: alice.account.id, pin: alice.pin, pixKey: 'loja@example.com', pixKeyType: 'EMAIL', amount },
    headers: { ...tenantHeaders(tenantId, alice.token), 'idempotency-key': randomUUID() },
  });

/** The samples of a Prometheus text answer, by series (`name` or `name{label="value"}`). */
function samplesOf(text: string): Map<string, number> {
  const samples = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const [series, value] = line.split(' ') as [string, string];
    samples.set(series, Number(value));
  }
  return samples;
}

async function metricsOf(base: string): Promise<{ text: string; samples: Map<string, number> }> {
  const res = await http<string>('GET', `${base}/metrics`);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
  return { text: res.body, samples: samplesOf(res.body) };
}

const tenantBacklog = (backlog: any) => backlog.pixPayouts.byTenant.find((t: any) => t.tenantId === tenantId);

test('payouts accepted while no worker settles them are the backlog: per tenant in system:check, platform-wide in /metrics; settled, they leave it', async () => {
  let payoutIds: string[] = [];
  const handOffsOfPayouts = () => sql(`select key from workflow_start where workflow_id = any($1::text[])`, [payoutIds.map((id) => `pix-payout-${id}`)]);
  const balanceBefore = await balanceOf(alice.account.id);
  await platform.stopWorker();
  try {
    const answers = await Promise.all([payKey(1), payKey(2), payKey(3)]);
    // Debited at once and answered, whether or not anything settles them.
    for (const a of answers) expect([a.status, a.body.payout.status]).toEqual([201, 'PROCESSING']);
    payoutIds = answers.map((a) => a.body.payout.payoutId);
    const debited = answers.reduce((sum, a) => sum + BigInt(a.body.payout.amountCents) + BigInt(a.body.payout.feeCents), 0n);
    expect(await balanceOf(alice.account.id)).toBe(balanceBefore - debited);
    // Their settlement waits in the hand-off: the reconciler that starts it runs in the worker.
    expect(await handOffsOfPayouts()).toHaveLength(3);

    // With no worker the probe cannot run: the check fails, and says what waits meanwhile.
    const failed = await admin(platform.env, 'system:check', '--timeout-seconds', '2');
    expect(failed.exitCode).not.toBe(0);
    expect(failed.err.code).toBe('COMMAND_FAILED');
    const during = JSON.parse(failed.err.message.split('settlement backlog: ')[1]);
    expect(tenantBacklog(during)).toEqual({ tenantId, tenantName: expect.any(String), unsettled: 3, oldestAgeSeconds: expect.any(Number) });
    expect(tenantBacklog(during).oldestAgeSeconds).toBeGreaterThanOrEqual(0);
    expect(during.pixPayouts.unsettled).toBe(during.pixPayouts.byTenant.reduce((sum: number, t: any) => sum + t.unsettled, 0));
    expect(during.pixPayouts.unsettled).toBeGreaterThanOrEqual(3);
    expect(during.pixPayouts.oldestAgeSeconds).toBeGreaterThanOrEqual(tenantBacklog(during).oldestAgeSeconds);
    expect(during.handOffs.find((h: any) => h.workflowType === 'pixPayoutWorkflow').pending).toBeGreaterThanOrEqual(3);

    for (const base of [platform.holderUrl, platform.apiUrl]) {
      const { text, samples } = await metricsOf(base);
      expect(samples.get('pix_payouts_unsettled')).toBeGreaterThanOrEqual(3);
      expect(samples.get('pix_payouts_unsettled_oldest_age_seconds')).toBeGreaterThanOrEqual(tenantBacklog(during).oldestAgeSeconds);
      expect(samples.get('workflow_handoffs_pending{workflow_type="pixPayoutWorkflow"}')).toBeGreaterThanOrEqual(3);
      // Public: the figures name no tenant, account or payout.
      for (const id of [tenantId, alice.account.id, ...payoutIds]) expect(text).not.toContain(id);
    }
  } finally {
    await platform.startWorker();
  }

  await waitFor(async () => ((await sql(`select 1 from pix_payout where tenant_id = $1 and status in ('REQUESTED', 'PROCESSING')`, [tenantId])).length === 0 ? true : undefined), 40_000, 'payouts settled');
  const statuses = await sql(`select id, status from pix_payout where tenant_id = $1`, [tenantId]);
  expect(statuses.map((p) => p.status)).toEqual(['POSTED', 'POSTED', 'POSTED']);
  expect(statuses.map((p) => p.id).sort()).toEqual([...payoutIds].sort());
  expect(await handOffsOfPayouts()).toEqual([]);

  const after = await adminOk(platform.env, 'system:check');
  expect(after.status).toBe('ok');
  expect(tenantBacklog(after.backlog)).toBeUndefined();
  expect(after.backlog.pixPayouts.unsettled).toBe(after.backlog.pixPayouts.byTenant.reduce((sum: number, t: any) => sum + t.unsettled, 0));
}, 90_000);

test('hand-offs Temporal has not taken are counted by workflow type with the age of the oldest, in system:check and /metrics', async () => {
  // Rows on a task queue no reconciler serves stay as rows do while Temporal is away; one was recorded 2 minutes ago.
  const taskQueue = `backlog-test-${randomUUID()}`;
  const keys = [`pix-payout-backlog-${randomUUID()}`, `pix-payout-backlog-${randomUUID()}`];
  await sql(
    `insert into workflow_start (key, task_queue, workflow_type, workflow_id, args, search_attributes, reuse_policy, created_at, next_attempt_at)
     select k, $2, 'pixPayoutWorkflow', k, '[]', '{}', 'ALLOW_DUPLICATE_FAILED_ONLY', now() - make_interval(mins => o), now() + interval '1 hour'
       from unnest($1::text[], array[2, 0]) as r(k, o)`,
    [keys, taskQueue],
  );
  try {
    const { backlog } = await adminOk(platform.env, 'system:check');
    const payouts = backlog.handOffs.find((h: any) => h.workflowType === 'pixPayoutWorkflow');
    expect(payouts.pending).toBeGreaterThanOrEqual(2);
    expect(payouts.oldestAgeSeconds).toBeGreaterThanOrEqual(120);
    for (const base of [platform.holderUrl, platform.apiUrl]) {
      const { samples } = await metricsOf(base);
      expect(samples.get('workflow_handoffs_pending{workflow_type="pixPayoutWorkflow"}')).toBeGreaterThanOrEqual(2);
      expect(samples.get('workflow_handoffs_oldest_age_seconds{workflow_type="pixPayoutWorkflow"}')).toBeGreaterThanOrEqual(120);
    }
  } finally {
    await sql('delete from workflow_start where task_queue = $1', [taskQueue]);
  }
});

test('the counts of unsettled payouts are read through their partial index, platform-wide and per tenant', async () => {
  // The test tables are small enough for the planner to prefer reading them whole; what matters is that the
  // backlog's predicate matches the index's, so that on a large table the index is usable.
  const client = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
  await client.connect();
  try {
    await client.query('set enable_seqscan = off');
    for (const query of [
      `select count(*), min(created_at) from pix_payout where status in ('REQUESTED', 'PROCESSING')`,
      `select tenant_id, count(*), min(created_at) from pix_payout where status in ('REQUESTED', 'PROCESSING') group by tenant_id`,
    ]) {
      const { rows } = await client.query(`explain (format json) ${query}`);
      const plan = JSON.stringify(rows[0]['QUERY PLAN']);
      expect(plan).toContain('pix_payout_unsettled_idx');
    }
  } finally {
    await client.end();
  }
});
