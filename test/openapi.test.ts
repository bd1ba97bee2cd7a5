import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { generateTypes, GENERATED } from '../clients/typescript/scripts/generate.ts';
import { EVENT_TYPES } from '../src/events/catalog.ts';
import { publishedDocument } from './support/conformance.ts';
import { closeDb, sql } from './support/db.ts';
import { apiKey, fund, newCpf, newTenant, onboarded, PIN, tenantHeaders, waitFor } from './support/fixtures.ts';
import { http } from './support/http.ts';
import { startPlatform, type Platform } from './support/platform.ts';

// The documents an integrator gets at /openapi.json: clean under `redocly lint` (recommended rules), complete (ids,
// examples, error codes, webhooks, servers), and the source of the typed client committed in clients/typescript.
let platform: Platform;
let documents: Record<'holder' | 'integration', any>;
let dir: string;

beforeAll(async () => {
  // Pix payouts settle quickly, and a scheduled payment short of balance fails after quick retries, so that every event
  // type is written within the test.
  platform = await startPlatform({ SANDBOX_PIX_SETTLE_MS: '300', SCHEDULED_PAYMENT_RETRIES: '1', SCHEDULED_PAYMENT_RETRY_INTERVAL_MS: '300' });
  documents = {
    holder: (await http('GET', `${platform.holderUrl}/openapi.json`)).body,
    integration: (await http('GET', `${platform.apiUrl}/openapi.json`)).body,
  };
  dir = mkdtempSync(join(tmpdir(), 'openapi-'));
}, 90_000);
afterAll(async () => {
  await platform?.stop();
  rmSync(dir, { recursive: true, force: true });
  await closeDb();
});

const redocly = join('node_modules', '@redocly', 'cli', 'bin', 'cli.js');

describe.each(['holder', 'integration'] as const)('the %s document', (name) => {
  test('passes redocly lint with the recommended rules: no error, no warning', async () => {
    const file = join(dir, `${name}.json`);
    writeFileSync(file, JSON.stringify(documents[name]));
    const { stdout } = await promisify(execFile)(process.execPath, [redocly, 'lint', file, '--extends=recommended', '--format=json'], {
      env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
    }).catch((err: { stdout: string }) => err);
    const report = JSON.parse(stdout) as { totals: { errors: number; warnings: number }; problems: { ruleId: string; message: string }[] };
    expect(report.problems.map((p) => `${p.ruleId}: ${p.message}`)).toEqual([]);
    expect(report.totals).toMatchObject({ errors: 0, warnings: 0 });
  }, 60_000);

  test('every operation has an operationId, request and response examples, and an error code enum on every error status', () => {
    const doc = documents[name];
    const resolve = (response: any) => (response.$ref ? doc.components.responses[response.$ref.split('/').pop()] : response);
    const missing: string[] = [];
    const operations = Object.entries<any>(doc.paths).flatMap(([path, item]) => Object.entries<any>(item).map(([method, op]) => ({ at: `${method.toUpperCase()} ${path}`, op })));
    for (const { at, op } of operations) {
      if (!op.operationId) missing.push(`${at}: operationId`);
      if (!op.parameters?.some((p: any) => p.$ref === '#/components/parameters/RequestId')) missing.push(`${at}: X-Request-Id`);
      const body = op.requestBody?.content?.['application/json'];
      if (body && body.example === undefined) missing.push(`${at}: request example`);
      for (const [status, response] of Object.entries<any>(op.responses).map(([s, r]) => [s, resolve(r)] as const)) {
        if (!response.headers?.['X-Request-Id'] && !['408', '431'].includes(status)) missing.push(`${at} ${status}: X-Request-Id header`);
        // Errors are JSON, or RFC 7807 problem JSON where the Pix rules ask for it (the charge locations).
        const errorBody = response.content?.['application/json'] ?? response.content?.['application/problem+json'];
        if (Number(status) >= 400 && !errorBody?.schema) missing.push(`${at} ${status}: schema`);
        for (const [type, media] of Object.entries<any>(response.content ?? {})) {
          if (media.example === undefined) missing.push(`${at} ${status} ${type}: example`);
          // An error body narrows Error's code to the codes of this status; a business outcome (a rejected TEV) has its own schema.
          const isError = media.schema?.allOf?.[0]?.$ref === '#/components/schemas/Error';
          if (isError && !(media.schema.allOf[1]?.properties?.code?.enum?.length > 0)) missing.push(`${at} ${status}: error codes`);
        }
      }
    }
    expect(missing).toEqual([]);
    expect(operations.length).toBeGreaterThan(10);
  });

  test('names the public URL of its host as its server', () => {
    expect(documents[name].servers).toEqual([{ url: name === 'holder' ? platform.holderUrl : platform.apiUrl }]);
  });

  test('is what the typed client in clients/typescript was generated from (regenerate: node clients/typescript/scripts/generate.ts)', async () => {
    expect(await generateTypes(documents[name])).toBe(readFileSync(GENERATED[name], 'utf8'));
  });
});

test('the holder document describes X-Tenant-Id and the bearer token as security schemes, entered once in /docs and kept', async () => {
  const { securitySchemes } = documents.holder.components;
  expect(securitySchemes.tenantId).toMatchObject({ type: 'apiKey', in: 'header', name: 'X-Tenant-Id' });
  expect(securitySchemes.tenantId.description).toMatch(/^Required/);
  expect(documents.holder.paths['/accounts/{accountId}/transactions'].get.security).toEqual([{ tenantId: [], holderJwt: [] }]);
  const init = await fetch(`${platform.holderUrl}/docs/swagger-ui-init.js`);
  expect(await init.text()).toMatch(/"persistAuthorization": true/);
});

test('/docs shows every description as written: no raw <…> outside a code span (taken as HTML, `tnk_<prefix>.<secret>` read `tnk_.`)', () => {
  const raw: string[] = [];
  const walk = (node: unknown, at: string): void => {
    if (!node || typeof node !== 'object') return;
    for (const [key, value] of Object.entries(node)) {
      if (key === 'description' && typeof value === 'string' && /<[^>]*>/.test(value.replace(/`[^`]*`/g, ''))) raw.push(`${at}: ${value}`);
      walk(value, `${at}/${key}`);
    }
  };
  walk(documents, '');
  expect(raw).toEqual([]);
  expect(documents.holder.components.securitySchemes.tenantApiKey.description).toContain('`tnk_<prefix>.<secret>`');
  expect(documents.integration.components.securitySchemes.apiKey.description).toContain('`pak_<prefix>.<secret>`');
});

test('X-Request-Id has no example, so /docs does not send every call with the same id', () => {
  for (const doc of [documents.holder, documents.integration]) {
    const parameter = doc.components.parameters.RequestId;
    expect(parameter).toMatchObject({ name: 'X-Request-Id', in: 'header', required: false });
    expect([parameter.example, parameter.examples, parameter.schema.example, parameter.schema.examples]).toEqual([undefined, undefined, undefined, undefined]);
  }
});

test('the integration document describes every event (the eleven of the interface and the opt-in ones) and their delivery headers under webhooks', () => {
  const { webhooks } = documents.integration;
  expect(Object.keys(webhooks).sort()).toEqual([...EVENT_TYPES].sort());
  for (const event of EVENT_TYPES) {
    const headers = webhooks[event].post.parameters.filter((p: any) => p.in === 'header').map((p: any) => p.name);
    expect(headers).toEqual(['authorization', 'webhook-id', 'webhook-timestamp', 'webhook-signature']);
    expect(webhooks[event].post.requestBody.content['application/json'].example.event).toBe(event);
  }
});

test('every event type the platform writes matches its payload in the webhooks of the integration document', async () => {
  const tenantId = await newTenant(platform);
  const [alice, bob] = await Promise.all([onboarded(platform, tenantId), onboarded(platform, tenantId)]);
  await fund(platform, tenantId, alice.account.id, 100_000); // pix.in.received
  const key = await apiKey(platform, tenantId, alice.account.pixAccountId);
  const integrator = () => ({ authorization: `Bearer ${key}`, 'idempotency-key': randomUUID() });
  const tev = (amountCents: string) =>
    http('POST', `${platform.apiUrl}/v1/tev`, { body: { destinationBranch: bob.account.agency, destinationAccount: bob.account.number, amountCents }, headers: integrator() });
  expect((await tev('150')).status).toBe(200); // tev.out.succeeded, tev.in.received
  expect((await tev('99999999')).status).toBe(422); // tev.out.failed
  // The sandbox PSP's cents choose the payout's fate: ,91 fails, ,92 is cancelled, ,93 is refunded after settling.
  for (const amount of [10, 10.91, 10.92, 10.93]) {
    const pix = await http('POST', `${platform.holderUrl}/pix/payment`, {
      body: { accountId: alice.account.id, pixKey: 'loja@example.com', pixKeyType: 'EMAIL', amount, pin: PIN },
      headers: tenantHeaders(tenantId, alice.token),
    });
    expect(pix.status).toBe(201);
  }
  const charges = `${platform.apiUrl}/v1/pix-accounts/${alice.account.pixAccountId}/charges`;
  const paid = (await http('POST', charges, { body: { amountCents: '1000' }, headers: integrator() })).body;
  await http('POST', `${platform.holderUrl}/sandbox/pix/charges/${paid.txid}/pay`, { body: { payerName: 'Pagador', payerDocument: newCpf() }, headers: tenantHeaders(tenantId) });
  expect((await http('POST', `${charges}/${paid.chargeId}/refunds`, { body: { amountCents: '400' }, headers: integrator() })).status).toBe(201);
  await http('POST', charges, { body: { amountCents: '1000', expiresInSeconds: 1 }, headers: integrator() }); // pix.charge.expired
  // A scheduled TEV a few seconds ahead (payment.scheduled.executed), and one beyond the balance (payment.scheduled.failed).
  const soon = new Date(Date.now() + 3_000);
  const inSaoPaulo = (type: string) => new Intl.DateTimeFormat('en-CA', { timeZone: 'America/Sao_Paulo', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit', hourCycle: 'h23' }).formatToParts(soon).find((p) => p.type === type)!.value;
  const when = { date: `${inSaoPaulo('year')}-${inSaoPaulo('month')}-${inSaoPaulo('day')}`, time: `${inSaoPaulo('hour')}:${inSaoPaulo('minute')}:${inSaoPaulo('second')}` };
  for (const amountCents of ['120', '99999999']) {
    const scheduled = await http('POST', `${platform.apiUrl}/v1/pix-accounts/${alice.account.pixAccountId}/scheduled-payments`, {
      body: { kind: 'TEV', branch: bob.account.agency, account: bob.account.number, amountCents, ...when },
      headers: integrator(),
    });
    expect(scheduled.status).toBe(201);
  }
  const batch = { items: [{ kind: 'TEV', externalRef: 'b-1', amountCents: '100', branch: bob.account.agency, account: bob.account.number }] };
  expect((await http('POST', `${platform.apiUrl}/v1/pix-accounts/${alice.account.pixAccountId}/batches`, { body: batch, headers: integrator() })).status).toBe(202); // payment.batch.finished

  const events = await waitFor(async () => {
    const rows = await sql<{ type: string; data: unknown }>('select type, data from event_outbox where tenant_id = $1', [tenantId]);
    return new Set(rows.map((r) => r.type)).size === EVENT_TYPES.length && rows;
  }, 45_000, 'every event type');
  const document = await publishedDocument(platform.apiUrl);
  expect(events.flatMap((e) => document.eventProblems({ event: e.type, data: e.data }).map((p) => `${e.type}: ${p}`))).toEqual([]);
}, 90_000);
