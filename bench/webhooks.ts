/**
 * `node bench/webhooks.ts [--events 2000] [--concurrency 16]`: webhook delivery against a running platform.
 * Registers one endpoint on a local HTTPS receiver, makes `--events` incoming Pix (each commits one
 * `pix.in.received` to the outbox), and measures deliveries per second at the receiver and the delay from the
 * event's commit (its `created_at`) to its receipt. The platform's worker must trust the receiver's self-signed
 * certificate: start it with `WEBHOOK_CA_FILE=data/bench-tls/cert.pem` (this script creates the file and says so).
 */
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { request } from './lib/http.ts';
import { admin, apiUrl, assertPlatformUp, holderUrl, mapLimit, newCpf, onboardHolder, openPool, repoRoot, say, waitForApprovedAccounts } from './lib/platform.ts';
import { Latencies, seconds, since } from './lib/stats.ts';

const { values } = parseArgs({ options: { events: { type: 'string', default: '2000' }, concurrency: { type: 'string', default: '16' } } });
const EVENTS = Number(values.events);
const CONCURRENCY = Number(values.concurrency);

function certificate(): { key: string; cert: string; certFile: string } {
  const dir = join(repoRoot, 'data', 'bench-tls');
  const [keyFile, certFile] = [join(dir, 'key.pem'), join(dir, 'cert.pem')];
  if (!existsSync(certFile)) {
    mkdirSync(dir, { recursive: true });
    execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', keyFile, '-out', certFile, '-days', '30', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1'], { stdio: 'ignore' });
  }
  return { key: readFileSync(keyFile, 'utf8'), cert: readFileSync(certFile, 'utf8'), certFile };
}

await assertPlatformUp();
const tls = certificate();
const received = new Map<string, number>();
const server = createServer({ key: tls.key, cert: tls.cert }, (req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const at = Date.now();
    const id = String(req.headers['webhook-id']);
    if (!received.has(id)) received.set(id, at);
    res.writeHead(204).end();
  });
});
await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
const receiverUrl = `https://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
say(`bench/webhooks.ts: ${EVENTS} events, ${CONCURRENCY} producers; receiver ${receiverUrl}`);
say(`(the worker must run with WEBHOOK_CA_FILE=${tls.certFile})`);

const pool = openPool();
const setup = performance.now();
const { tenantId } = await admin('tenant:create', '--name', `bench-webhooks ${new Date().toISOString()}`);
const holder = await onboardHolder(tenantId, 'Recebedor Bench');
const [account] = [...(await waitForApprovedAccounts(pool, tenantId, 1)).values()];
const { key } = await admin('api-key:create', '--tenant', tenantId, '--pix-account', account!.pixAccountId);
const registered = await request('POST', `${apiUrl}/v1/pix-accounts/${account!.pixAccountId}/webhooks`, {
  body: { url: receiverUrl, events: ['pix.in.received'], authToken: randomUUID() + randomUUID() },
  headers: { authorization: `Bearer ${key}`, 'idempotency-key': randomUUID() },
});
if (registered.status !== 201) throw new Error(`webhook registration failed: ${registered.status} ${JSON.stringify(registered.body)}`);
say(`setup ${seconds(since(setup))} (tenant ${tenantId}, holder ${holder.holderId})`);

const produce = performance.now();
await mapLimit(Array.from({ length: EVENTS }), CONCURRENCY, async () => {
  const res = await request('POST', `${holderUrl}/sandbox/pix/incoming`, {
    body: { accountId: account!.id, amountCents: '1', payerName: 'Pagador Bench', payerDocument: newCpf() },
    headers: { 'x-tenant-id': tenantId },
  });
  if (res.status !== 201) throw new Error(`incoming Pix failed: ${res.status}`);
});
say(`produced ${EVENTS} events in ${seconds(since(produce))} (${(EVENTS / (since(produce) / 1000)).toFixed(1)} events/s committed)`);

const deadline = Date.now() + 10 * 60_000;
while (received.size < EVENTS && Date.now() < deadline) await new Promise((r) => setTimeout(r, 250));
const { rows } = await pool.query<{ id: string; created_ms: string }>(
  `select id, (extract(epoch from created_at) * 1000)::bigint::text as created_ms from event_outbox where account_id = $1`,
  [account!.id],
);
const delays = new Latencies();
let first = Infinity;
let last = 0;
for (const r of rows) {
  const at = received.get(r.id);
  if (at === undefined) continue;
  delays.add(at - Number(r.created_ms));
  first = Math.min(first, at);
  last = Math.max(last, at);
}
say(`delivered ${received.size} of ${rows.length} events`);
say(`deliveries/s at the receiver   ${(received.size / Math.max((last - first) / 1000, 0.001)).toFixed(1)} (first to last receipt ${seconds(last - first)})`);
say(delays.line('commit → receipt'));
say(received.size === rows.length ? 'result: PASS (every event delivered once)' : 'result: FAIL (events missing)');
await pool.end();
server.close();
process.exit(received.size === rows.length ? 0 : 1);
