import { execFile, execFileSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { runQuickstart } from '../clients/typescript/quickstart.ts';
import { conformingFetch, publishedDocument } from './support/conformance.ts';
import { closeDb, sql } from './support/db.ts';
import { apiKey, newCpf, newTenant, waitFor } from './support/fixtures.ts';
import { startPlatform, type Platform } from './support/platform.ts';
import { startReceiver, testCertificate, type Receiver } from './support/receiver.ts';

// The typed client's quickstart (clients/typescript/README.md), run as written against a running platform. Its
// webhook delivery needs the outbox relay, which other test files' workers must not run on the run's shared database
// (webhooks.test.ts relays it), so this platform gets a database of its own on the same server.
const DATABASE = `quickstart_${process.pid}`;
let platform: Platform;
let receiver: Receiver;
let tenantId: string;

async function databaseOfItsOwn(): Promise<string> {
  await sql(`create database ${DATABASE}`);
  const url = new URL(process.env.TEST_DATABASE_URL!);
  url.pathname = `/${DATABASE}`;
  execFileSync(process.execPath, ['scripts/migrate.ts'], { env: { ...process.env, DATABASE_URL: url.href, LOG_LEVEL: 'warn' }, stdio: ['ignore', 'ignore', 'inherit'] });
  return url.href;
}

beforeAll(async () => {
  platform = await startPlatform({ DATABASE_URL: await databaseOfItsOwn(), OUTBOX_RELAY: '1', WEBHOOK_CA_FILE: testCertificate().certFile });
  receiver = await startReceiver();
  tenantId = await newTenant(platform);
}, 90_000);
afterAll(async () => {
  await platform?.stop();
  await receiver?.close();
  await sql(`drop database if exists ${DATABASE} with (force)`);
  await closeDb();
});

test('the client quickstart runs against the platform, every answer conforming to the documents', async () => {
  const path = '/quickstart';
  const lines: string[] = [];
  const result = await runQuickstart({
    holderUrl: platform.holderUrl,
    apiUrl: platform.apiUrl,
    tenantId,
    issueApiKey: (pixAccountIds) => apiKey(platform, tenantId, ...pixAccountIds),
    webhookReceiver: {
      url: `${receiver.url}${path}`,
      async nextDelivery() {
        const delivery = await waitFor(async () => receiver.received.find((r) => r.path === path), 30_000, 'the webhook delivery');
        return { headers: Object.fromEntries(Object.entries(delivery.headers).map(([k, v]) => [k, String(v)])), body: delivery.body };
      },
    },
    documents: [newCpf(), newCpf()],
    fetch: conformingFetch,
    log: (line) => lines.push(line),
  });

  expect(result.tev).toMatchObject({ kind: 'done', status: 'DONE', amountCents: '1050' });
  expect(result.outSide).toMatchObject({ id: result.tev.tevId, direction: 'out', destination: expect.any(Object) });
  expect(result.inSide).toMatchObject({ id: result.tev.tevId, direction: 'in', origin: expect.any(Object) });
  expect(result.statement.map((t) => t.credit)).toEqual([false, true]);
  expect(result.event).toMatchObject({ event: 'tev.in.received', data: { tevTransferId: result.tev.tevId } });
  expect(result.scheduled).toMatchObject({ status: 'CANCELLED', kind: 'TEV', amountCents: '500' });
  expect(result.scheduled.occurrences.map((o) => o.status)).toEqual(['PAID', 'CANCELLED', 'CANCELLED']);
  expect(result.batch).toMatchObject({ status: 'FINISHED', counts: { total: 2, paid: 1, invalid: 1 } });
  expect(result.batchItems.map((i) => [i.externalRef, i.status, i.reason])).toEqual([['quickstart-1', 'PAID', null], ['quickstart-2', 'INVALID', 'DESTINATION_NOT_FOUND']]);

  // The delivery itself matches the integration document's `webhooks`.
  const delivery = receiver.received.find((r) => r.path === path)!;
  expect((await publishedDocument(platform.apiUrl)).deliveryProblems(delivery.headers, JSON.parse(delivery.body))).toEqual([]);
}, 90_000);

test('`node clients/typescript/quickstart.ts` runs it as the README says: the operator CLI issues the key, its own receiver verifies the delivery', async () => {
  const { certFile } = testCertificate();
  const { stdout } = await promisify(execFile)(process.execPath, ['clients/typescript/quickstart.ts'], {
    // The operator command line reaches the platform's database through DATABASE_URL, as after `npm start`.
    env: {
      ...platform.env,
      TENANT_ID: tenantId,
      HOLDER_URL: platform.holderUrl,
      API_URL: platform.apiUrl,
      WEBHOOK_TLS_KEY: join(dirname(certFile), 'key.pem'),
      WEBHOOK_TLS_CERT: certFile,
    },
  });
  expect(stdout).toMatch(/^TEV \S+: done, fee \d+ cents$/m);
  expect(stdout).toMatch(/^webhook \S+ verified: tev\.in\.received of 1050 cents$/m);
  expect(stdout).toMatch(/^first occurrence \S+: PAID, TEV \S+$/m);
  expect(stdout).toMatch(/^batch FINISHED: quickstart-1 PAID, quickstart-2 INVALID$/m);
}, 90_000);
