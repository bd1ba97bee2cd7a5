/**
 * Webhook delivery against a running platform, with HTTPS receivers on this machine.
 *
 *   node bench/webhooks.ts [--endpoints 10] [--backlog 20000] [--rate 500] [--seconds 20] [--outage-seconds 120]
 *
 * The worker must trust the receivers' self-signed certificate: start the platform with
 * `WEBHOOK_CA_FILE=data/bench-tls/cert.pem` (this script creates the file and says so).
 *
 * Setup: a tenant with `endpoints` holders, each with one endpoint (its own receiver) for `pix.in.received`.
 * Events are committed straight into the outbox (what a posting commits with its change), so each phase measures the
 * delivery pipeline (relay, wakes, endpoint workflows, HTTPS) rather than how fast postings can be made:
 * 1. throughput: a backlog of `backlog` events spread over the endpoints, drained; deliveries/s at the receivers.
 * 2. commit to receipt: `rate` events/s for `seconds`; the delay from each event's commit to its first receipt.
 * 3. outage: one receiver refuses connections for `outage-seconds` while events keep coming, then comes back; every
 *    delivery must arrive after it recovers.
 * Then the database is checked: exactly one successful attempt per delivery.
 */
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type pg from 'pg';
import { request } from './lib/http.ts';
import { admin, apiUrl, assertPlatformUp, mapLimit, onboardHolder, openPool, repoRoot, say, waitForApprovedAccounts, type BenchAccount } from './lib/platform.ts';
import { Latencies, seconds, since } from './lib/stats.ts';

const { values } = parseArgs({
  options: {
    endpoints: { type: 'string', default: '10' },
    backlog: { type: 'string', default: '20000' },
    rate: { type: 'string', default: '500' },
    seconds: { type: 'string', default: '20' },
    'outage-seconds': { type: 'string', default: '120' },
  },
});
const ENDPOINTS = Number(values.endpoints);
const BACKLOG = Number(values.backlog);
const RATE = Number(values.rate);
const SECONDS = Number(values.seconds);
const OUTAGE_SECONDS = Number(values['outage-seconds']);

function certificate(): { key: string; cert: string; certFile: string } {
  const dir = join(repoRoot, 'data', 'bench-tls');
  const [keyFile, certFile] = [join(dir, 'key.pem'), join(dir, 'cert.pem')];
  if (!existsSync(certFile)) {
    mkdirSync(dir, { recursive: true });
    execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', keyFile, '-out', certFile, '-days', '30', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1'], { stdio: 'ignore' });
  }
  return { key: readFileSync(keyFile, 'utf8'), cert: readFileSync(certFile, 'utf8'), certFile };
}

/** One HTTPS receiver: first receipt time of each webhook-id, and how many receipts in all. */
interface Receiver {
  port: number;
  url: string;
  firstReceipt: Map<string, number>;
  receipts: number;
  close(): Promise<void>;
  open(): Promise<void>;
}

async function startReceiver(tls: { key: string; cert: string }, port = 0): Promise<Receiver> {
  let server: Server | null = null;
  const r: Receiver = {
    port,
    url: '',
    firstReceipt: new Map(),
    receipts: 0,
    close: () => new Promise((resolve) => {
      server!.closeAllConnections();
      server!.close(() => resolve());
    }),
    open: () =>
      new Promise((resolve) => {
        server = createServer({ key: tls.key, cert: tls.cert, keepAlive: true }, (req, res) => {
          req.resume();
          req.on('end', () => {
            const id = String(req.headers['webhook-id']);
            r.receipts++;
            if (!r.firstReceipt.has(id)) r.firstReceipt.set(id, Date.now());
            res.writeHead(204).end();
          });
        });
        server.listen(r.port, '127.0.0.1', () => {
          r.port = (server!.address() as AddressInfo).port;
          r.url = `https://127.0.0.1:${r.port}/hook`;
          resolve();
        });
      }),
  };
  await r.open();
  return r;
}

/** Commits `count` events for one account in one transaction; answers their ids and commit time. */
async function commitEvents(pool: pg.Pool, tenantId: string, a: BenchAccount, count: number): Promise<{ ids: string[]; at: number }> {
  const { rows } = await pool.query<{ id: string }>(
    `insert into event_outbox (id, tenant_id, account_id, pix_account_id, type, data)
     select gen_random_uuid(), $1, $2, $3, 'pix.in.received',
            jsonb_build_object('amountCents', '1', 'pixAccountId', $3::text, 'movementId', 'bench', 'receivedAt', now())
       from generate_series(1, $4) returning id`,
    [tenantId, a.id, a.pixAccountId, count],
  );
  return { ids: rows.map((r) => r.id), at: Date.now() };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function waitUntil(done: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (!done() && Date.now() < deadline) await sleep(100);
  return done();
}

await assertPlatformUp();
const tls = certificate();
say(`bench/webhooks.ts: ${ENDPOINTS} endpoints; backlog ${BACKLOG}; ${RATE} events/s for ${SECONDS} s; outage ${OUTAGE_SECONDS} s`);
say(`(the worker must run with WEBHOOK_CA_FILE=${tls.certFile})`);

const pool = openPool(8);
const setupStart = performance.now();
const { tenantId } = await admin('tenant:create', '--name', `bench-webhooks ${new Date().toISOString()}`);
const holders = await mapLimit(Array.from({ length: ENDPOINTS }), 4, (_, i) => onboardHolder(tenantId, `Recebedor Bench ${i}`));
const byHolder = await waitForApprovedAccounts(pool, tenantId, ENDPOINTS);
const accounts = holders.map((h) => byHolder.get(h.holderId)!);
const receivers = await Promise.all(accounts.map(() => startReceiver(tls)));
await mapLimit(accounts, 4, async (a, i) => {
  const { key } = await admin('api-key:create', '--tenant', tenantId, '--pix-account', a.pixAccountId);
  const res = await request('POST', `${apiUrl}/v1/pix-accounts/${a.pixAccountId}/webhooks`, {
    body: { url: receivers[i]!.url, events: ['pix.in.received'], authToken: `${randomUUID()}${randomUUID()}` },
    headers: { authorization: `Bearer ${key}`, 'idempotency-key': randomUUID() },
  });
  if (res.status !== 201) throw new Error(`webhook registration failed: ${res.status} ${JSON.stringify(res.body)}`);
});
say(`setup ${seconds(since(setupStart))} (tenant ${tenantId})`);
const received = () => receivers.reduce((n, r) => n + r.firstReceipt.size, 0);
let pass = true;

// 1. Throughput: a backlog, drained.
say(`\n1. throughput: ${BACKLOG} events (${BACKLOG / ENDPOINTS} per endpoint), committed at once`);
const before1 = received();
await Promise.all(accounts.map((a) => commitEvents(pool, tenantId, a, Math.floor(BACKLOG / ENDPOINTS))));
const drainStart = Date.now();
const drained = await waitUntil(() => received() - before1 >= BACKLOG, 10 * 60_000);
const drainMs = Date.now() - drainStart;
say(`  ${drained ? 'all' : 'NOT all'} delivered: ${received() - before1} in ${seconds(drainMs)}: ${((received() - before1) / (drainMs / 1000)).toFixed(0)} deliveries/s (target >= 1,000)`);
pass &&= drained;

// 2. Commit to receipt at a steady rate.
say(`\n2. commit to receipt: ${RATE} events/s for ${SECONDS} s, spread over the endpoints`);
const committed = new Map<string, { at: number; receiver: Receiver }>();
const tick = 100;
const perTick = RATE / (1000 / tick);
const steadyStart = Date.now();
for (let t = 0; t < (SECONDS * 1000) / tick; t++) {
  const due = steadyStart + t * tick;
  if (Date.now() < due) await sleep(due - Date.now());
  const a = t % ENDPOINTS;
  const { ids, at } = await commitEvents(pool, tenantId, accounts[a]!, Math.round(perTick));
  for (const id of ids) committed.set(id, { at, receiver: receivers[a]! });
}
const committedMs = Date.now() - steadyStart;
const allArrived = await waitUntil(() => [...committed].every(([id, c]) => c.receiver.firstReceipt.has(id)), 120_000);
const delays = new Latencies();
for (const [id, c] of committed) {
  const at = c.receiver.firstReceipt.get(id);
  if (at !== undefined) delays.add(at - c.at);
}
say(`  committed ${committed.size} events in ${seconds(committedMs)} (${(committed.size / (committedMs / 1000)).toFixed(0)} events/s)`);
say(`  ${delays.line('commit -> receipt')} (target p99 < 1,000 ms)`);
pass &&= allArrived;

// 3. One receiver refuses connections for a while, then comes back.
const victim = receivers[0]!;
const outageEvents = 100;
say(`\n3. outage: receiver 1 refuses connections for ${OUTAGE_SECONDS} s while ${outageEvents} events for it are committed`);
await victim.close();
const outage = await commitEvents(pool, tenantId, accounts[0]!, outageEvents);
await sleep(OUTAGE_SECONDS * 1000);
await victim.open();
const recoveredAt = Date.now();
say(`  receiver back on port ${victim.port}; waiting for every delivery (retries double from 5 s)`);
const recovered = await waitUntil(() => outage.ids.every((id) => victim.firstReceipt.has(id)), 10 * 60_000);
const lastArrival = Math.max(...outage.ids.map((id) => victim.firstReceipt.get(id) ?? 0));
say(`  ${recovered ? 'all' : 'NOT all'} ${outageEvents} delivered after recovery; the last ${seconds(lastArrival - recoveredAt)} after the receiver came back`);
pass &&= recovered;

// Exactly one successful attempt per delivery.
const { rows: [check] } = await pool.query<{ deliveries: number; not_one: number; receipts: number }>(
  `select count(*)::int as deliveries,
          count(*) filter (where (select count(*) from webhook_attempt a where a.delivery_id = d.id and a.error is null) <> 1)::int as not_one
     from webhook_delivery d join webhook_endpoint e on e.id = d.endpoint_id where e.tenant_id = $1`,
  [tenantId],
);
const receipts = receivers.reduce((n, r) => n + r.receipts, 0);
say(`\nsuccessful attempts: ${check!.deliveries - check!.not_one} of ${check!.deliveries} deliveries have exactly one (target: all)`);
say(`receipts ${receipts} for ${received()} distinct events (a receipt more than the events is a redelivery after a lost answer)`);
pass &&= check!.not_one === 0;
say(`result: ${pass ? 'PASS' : 'FAIL'}`);
await pool.end();
await Promise.all(receivers.map((r) => r.close()));
process.exit(pass ? 0 : 1);
