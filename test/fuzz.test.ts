import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { buildBrCode } from '../src/pix/brcode.ts';
import { adminOk } from './support/admin.ts';
import { closeDb } from './support/db.ts';
import { apiKey, fund, newCnpj, newCpf, newTenant, onboarded, PASSWORD, pixAccountIdOf, registeredWithAccount, waitFor, type Onboarded } from './support/fixtures.ts';
import { BAD_PATH_SEGMENTS, badBodies, badBodyValues, badQueryValues, operationsOf, type Operation } from './support/fuzz.ts';
import { http, type HttpResult } from './support/http.ts';
import { expectLedgerConsistent } from './support/ledger.ts';
import { startPlatform, type Platform } from './support/platform.ts';
import { tenantState } from './support/tenant-state.ts';

// Every route of both OpenAPI documents, fed bad values of each path parameter, query parameter and body field (from
// its schema), one at a time on top of a request that is otherwise valid: each must be a 4xx with the error body, and
// the tenant must be left exactly as it was.
let platform: Platform;
let tenantId: string;
let alice: Onboarded;
let bob: Onboarded;
let alicePix: string;
let aliceKey: string;
let tenantKey: string;
/** Valid values of every route's inputs: what the fuzzer spoils one input at a time. */
let baselines: Record<string, { params?: Record<string, string>; query?: Record<string, string>; body?: Record<string, unknown> }>;

beforeAll(async () => {
  platform = await startPlatform();
  tenantId = await newTenant(platform);
  const [a, b, pending] = await Promise.all([onboarded(platform, tenantId), onboarded(platform, tenantId), registeredWithAccount(platform, tenantId)]);
  [alice, bob] = [a, b];
  alicePix = await pixAccountIdOf(platform, tenantId, alice.document);
  aliceKey = await apiKey(platform, tenantId, alicePix);
  tenantKey = (await adminOk(platform.env, 'tenant-key:create', '--tenant', tenantId)).key;
  await fund(platform, tenantId, alice.account.id, 100_000);
  const integrator = () => ({ authorization: `Bearer ${aliceKey}`, 'idempotency-key': randomUUID() });
  // Real records behind the ids, so an input that slipped through would move money or change them, and show.
  const charge = async () => (await http('POST', `${platform.apiUrl}/v1/pix-accounts/${alicePix}/charges`, { body: { amountCents: '5000' }, headers: integrator() })).body;
  const [activeCharge, paidCharge] = [await charge(), await charge()];
  await http('POST', `${platform.holderUrl}/sandbox/pix/charges/${paidCharge.txid}/pay`, { body: { payerName: 'Pagador', payerDocument: newCpf() }, headers: { 'x-tenant-id': tenantId } });
  const webhook = await http('POST', `${platform.apiUrl}/v1/pix-accounts/${alicePix}/webhooks`, {
    body: { url: 'https://example.com/fuzz', events: ['pix.in.received'], authToken: 'whsec-fuzz-token-0123456789abcdef' },
    headers: integrator(),
  });
  const contact = await http('POST', `${platform.holderUrl}/accounts/${alice.account.id}/contacts`, {
    body: { kind: 'ACCOUNT', branch: bob.account.agency, account: bob.account.number, pin: alice.pin },
    headers: { 'x-tenant-id': tenantId, authorization: `Bearer ${alice.token}` },
  });
  const scheduled = {
    kind: 'TEV',
    branch: bob.account.agency,
    account: bob.account.number,
    amountCents: '150',
    date: new Date(Date.now() + 30 * 86_400_000).toISOString().slice(0, 10),
    time: '06:00',
    recurrence: { frequency: 'MONTHLY', count: 2 },
  };
  const schedule = (
    await http('POST', `${platform.holderUrl}/accounts/${alice.account.id}/scheduled-payments`, {
      body: { ...scheduled, pin: alice.pin },
      headers: { 'x-tenant-id': tenantId, authorization: `Bearer ${alice.token}` },
    })
  ).body;
  const occurrence = { scheduleId: schedule.id, date: schedule.occurrences[1].date };
  const batchItem = { kind: 'TEV', externalRef: 'fuzz-1', amountCents: '150', branch: bob.account.agency, account: bob.account.number };
  const batch = (await http('POST', `${platform.apiUrl}/v1/pix-accounts/${alicePix}/batches`, { body: { items: [batchItem] }, headers: integrator() })).body;
  // Ended before the fuzzing starts, so that its run changes nothing while a route's state is compared.
  await waitFor(async () => (await http('GET', `${platform.apiUrl}/v1/pix-accounts/${alicePix}/batches/${batch.batchId}`, { headers: { authorization: `Bearer ${aliceKey}` } })).body.finishedAt, 30_000, 'the batch to end');
  const statementRange = { startDate: '2020-01-01', endDate: '2030-12-31' };
  const pay = { accountId: alice.account.id, amount: 1.5, pin: alice.pin, description: 'fuzz' };
  baselines = {
    'POST /persons': { body: { name: 'Maria da Silva', document: newCpf(), email: `${randomUUID()}@example.com`, password: PASSWORD } },
    'POST /companies': { body: { name: 'Padaria Fuzz LTDA', document: newCnpj(), email: `${randomUUID()}@example.com`, password: PASSWORD } },
    'POST /authenticate': { body: { document: newCpf(), password: PASSWORD } },
    'POST /authenticate/clients': { body: { document: alice.document } },
    'POST /passwords/create-pin': { body: { pin: '1357' } },
    'POST /passwords/change-pin': { body: { currentPin: alice.pin, newPin: '1357' } },
    'PUT /accounts/{accountId}/monthly-goal': { params: { accountId: alice.account.id }, body: { monthlyGoal: 150 } },
    'GET /accounts/{accountId}/limits': { params: { accountId: alice.account.id } },
    'PUT /accounts/{accountId}/limits': { params: { accountId: alice.account.id }, body: { pin: alice.pin, nightStart: '20:00', pix: { dayCents: '1000', nightCents: '1000' }, tev: { monthCents: '5000' } } },
    'DELETE /accounts/{accountId}/limits/pending': { params: { accountId: alice.account.id } },
    'POST /accounts/{accountId}/tev/beneficiary': { params: { accountId: alice.account.id }, body: { document: bob.document } },
    'POST /accounts/{accountId}/tev/payment': { params: { accountId: alice.account.id }, body: { accountNumber: bob.account.number, amount: 1.5, pin: alice.pin, description: 'fuzz' } },
    'GET /accounts/{accountId}/transactions': { params: { accountId: alice.account.id }, query: statementRange },
    'GET /accounts/{accountId}/payouts/{payoutId}': { params: { accountId: alice.account.id, payoutId: 'c0000000000000000000fuzz' } },
    'GET /accounts/{accountId}/payouts/{payoutId}/receipt': { params: { accountId: alice.account.id, payoutId: 'c0000000000000000000fuzz' } },
    'GET /accounts/{accountId}/transactions/{transactionId}/receipt': { params: { accountId: alice.account.id, transactionId: randomUUID() } },
    'GET /accounts/{accountId}/balance': { params: { accountId: alice.account.id }, query: { at: '2026-11-22T10:45:07.123-03:00' } },
    // At most a year. Answered as CSV, OFX or PDF only: fuzzed with Accept: text/csv (below).
    'GET /accounts/{accountId}/statement': { params: { accountId: alice.account.id }, query: { startDate: '2026-01-01', endDate: '2026-12-31' } },
    'GET /receipts/{code}': { params: { code: '7K2M-9QXD-4HB8-T3VW' } },
    'POST /accounts/{accountId}/contacts': { params: { accountId: alice.account.id }, body: { kind: 'PIX_KEY', pixKey: 'fuzz@example.com', pixKeyType: 'EMAIL', pin: alice.pin } },
    'GET /accounts/{accountId}/contacts': { params: { accountId: alice.account.id } },
    'DELETE /accounts/{accountId}/contacts/{contactId}': { params: { accountId: alice.account.id, contactId: contact.body.id } },
    'POST /accounts/{accountId}/scheduled-payments': { params: { accountId: alice.account.id }, body: { ...scheduled, pin: alice.pin } },
    'GET /accounts/{accountId}/scheduled-payments': { params: { accountId: alice.account.id } },
    'GET /accounts/{accountId}/scheduled-payments/{scheduleId}': { params: { accountId: alice.account.id, scheduleId: schedule.id } },
    'DELETE /accounts/{accountId}/scheduled-payments/{scheduleId}': { params: { accountId: alice.account.id, scheduleId: schedule.id } },
    'DELETE /accounts/{accountId}/scheduled-payments/{scheduleId}/occurrences/{date}': { params: { accountId: alice.account.id, ...occurrence } },
    'GET /approvals': {},
    'GET /approvals/{id}': { params: { id: randomUUID() } },
    'POST /approvals/{id}/approve': { params: { id: randomUUID() }, body: { pin: alice.pin } },
    'POST /approvals/{id}/reject': { params: { id: randomUUID() }, body: { pin: alice.pin } },
    'POST /pix/payment': { body: { ...pay, pixKey: bob.document, pixKeyType: 'CPF' } },
    'POST /pix/qrcode/payment': {
      body: { ...pay, description: undefined, qrCode: buildBrCode({ pixKey: bob.document, merchantName: 'Padaria', merchantCity: 'Natal', amountCents: null, txid: null }) },
    },
    'GET /health': {},
    'GET /metrics': {},
    'GET /onboarding/{requisitionId}': { params: { requisitionId: String(pending.holder.onboardingRequisitionId) } },
    // No charge exists in this tenant: the location answers its own 404, which the fuzzing must not turn into a 200.
    'GET /pix/cob/{txid}': { params: { txid: 'k8Jd0s2LqX9vT4mB7nC1pR5wY3' } },
    'GET /pix/jwks.json': {},
    'POST /onboarding/{requisitionId}/complete': { params: { requisitionId: String(pending.holder.onboardingRequisitionId) }, body: { decision: 'APPROVED', reason: 'ok' } },
    'POST /sandbox/pix/incoming': { body: { accountId: alice.account.id, amountCents: '100', payerName: 'Pagador', payerDocument: newCpf() } },
    'POST /sandbox/pix/charges/{txid}/pay': { params: { txid: activeCharge.txid }, body: { payerName: 'Pagador', payerDocument: newCpf(), amountCents: '5000' } },
    'POST /v1/tev': { body: { destinationBranch: bob.account.agency, destinationAccount: bob.account.number, amountCents: '150', description: 'fuzz', externalRef: 'fuzz-1' } },
    'GET /v1/tev/{id}': { params: { id: 'c0000000000000000000fuzz' } },
    'GET /v1/pix-accounts/{accountId}/fees': { params: { accountId: alicePix } },
    'POST /v1/pix-accounts/{accountId}/webhooks': {
      params: { accountId: alicePix },
      body: { url: 'https://example.com/hooks', events: ['pix.in.received'], authToken: 'whsec-fuzz-token-0123456789abcdef' },
    },
    'GET /v1/pix-accounts/{accountId}/webhooks': { params: { accountId: alicePix } },
    'DELETE /v1/pix-accounts/{accountId}/webhooks/{webhookId}': { params: { accountId: alicePix, webhookId: webhook.body.id } },
    'GET /v1/pix-accounts/{accountId}/webhooks/{webhookId}/deliveries': { params: { accountId: alicePix, webhookId: webhook.body.id } },
    'POST /v1/pix-accounts/{accountId}/webhooks/{webhookId}/deliveries/{eventId}/redeliver': {
      params: { accountId: alicePix, webhookId: webhook.body.id, eventId: randomUUID() },
    },
    'POST /v1/pix-accounts/{accountId}/charges': { params: { accountId: alicePix }, body: { amountCents: '1000', expiresInSeconds: 3600, tag: 'fuzz' } },
    'GET /v1/pix-accounts/{accountId}/charges': { params: { accountId: alicePix } },
    'GET /v1/pix-accounts/{accountId}/charges/{chargeId}': { params: { accountId: alicePix, chargeId: activeCharge.chargeId } },
    'POST /v1/pix-accounts/{accountId}/charges/{chargeId}/refunds': { params: { accountId: alicePix, chargeId: paidCharge.chargeId }, body: { amountCents: '100' } },
    'POST /v1/pix-accounts/{accountId}/scheduled-payments': { params: { accountId: alicePix }, body: scheduled },
    'GET /v1/pix-accounts/{accountId}/scheduled-payments': { params: { accountId: alicePix } },
    'GET /v1/pix-accounts/{accountId}/scheduled-payments/{scheduleId}': { params: { accountId: alicePix, scheduleId: schedule.id } },
    'DELETE /v1/pix-accounts/{accountId}/scheduled-payments/{scheduleId}': { params: { accountId: alicePix, scheduleId: schedule.id } },
    'DELETE /v1/pix-accounts/{accountId}/scheduled-payments/{scheduleId}/occurrences/{date}': { params: { accountId: alicePix, ...occurrence } },
    'POST /v1/pix-accounts/{accountId}/batches': { params: { accountId: alicePix }, body: { items: [{ ...batchItem, externalRef: 'fuzz-2' }] } },
    'GET /v1/pix-accounts/{accountId}/batches/{batchId}': { params: { accountId: alicePix, batchId: batch.batchId } },
    'GET /v1/pix-accounts/{accountId}/batches/{batchId}/items': { params: { accountId: alicePix, batchId: batch.batchId } },
    'POST /v1/pix-accounts/{accountId}/batches/{batchId}/cancel': { params: { accountId: alicePix, batchId: batch.batchId } },
    // Unsigned (the fuzzing sends no webhook-id): refused before the body is read, whatever the body.
    'POST /v1/pix/provider/notifications': { body: { type: 'payout.settled', data: { payoutId: 'c0000000000000000000fuzz', endToEndId: 'E99999999202611241200aB3dE5fG7hJ', settledAt: '2026-11-24T12:00:00Z' } } },
  };
}, 120_000);
afterAll(async () => {
  await expectLedgerConsistent(tenantId);
  await platform?.stop();
  await closeDb();
});

interface Case {
  what: string;
  url: string;
  body?: string;
}

/** One request per bad value of each input, the others left valid. */
function casesOf(base: string, op: Operation): Case[] {
  const baseline = baselines[`${op.method} ${op.path}`]!;
  const url = (params: Record<string, string>, query: Record<string, string>) => {
    const path = op.path.replace(/\{(\w+)\}/g, (_m, name: string) => params[name]!);
    const search = Object.entries(query).map(([k, v]) => `${k}=${v}`).join('&');
    return `${base}${path}${search ? `?${search}` : ''}`;
  };
  const encode = (values: Record<string, string> = {}) => Object.fromEntries(Object.entries(values).map(([k, v]) => [k, encodeURIComponent(v)]));
  const params = encode(baseline.params);
  const query = encode(baseline.query);
  const body = baseline.body && JSON.stringify(baseline.body);
  const cases: Case[] = [];
  for (const p of op.parameters) {
    if (p.in === 'path') {
      for (const bad of BAD_PATH_SEGMENTS) cases.push({ what: `path ${p.name}=${bad.slice(0, 20)}`, url: url({ ...params, [p.name]: bad }, query), body });
    }
    if (p.in === 'query') {
      for (const bad of badQueryValues(p.schema ?? {})) cases.push({ what: `query ${p.name}=${bad.slice(0, 20)}`, url: url(params, { ...query, [p.name]: bad }), body });
      cases.push({ what: `query ${p.name} twice`, url: url(params, { ...query, [p.name]: `${query[p.name] ?? '1'}&${p.name}=2` }), body });
      if (p.required) cases.push({ what: `query ${p.name} missing`, url: url(params, Object.fromEntries(Object.entries(query).filter(([k]) => k !== p.name))), body });
    }
  }
  if (op.body && baseline.body) {
    // An object's fields, or those of the union's branch the baseline is (every field of it a property of the branch).
    const branch = op.body.oneOf?.find((variant) => Object.keys(baseline.body!).every((field) => field in (variant.properties ?? {})));
    if (op.body.oneOf && !branch) throw new Error(`${op.method} ${op.path}: the baseline's body is none of the body's kinds, so no field of it would be fuzzed`);
    for (const [field, schema] of Object.entries(op.body.properties ?? branch?.properties ?? {})) {
      for (const bad of badBodyValues(schema)) {
        cases.push({ what: `body ${field}=${JSON.stringify(bad)?.slice(0, 30)}`, url: url(params, query), body: JSON.stringify({ ...baseline.body, [field]: bad }) });
      }
    }
    for (const text of badBodies(op.body)) cases.push({ what: `body ${JSON.stringify(text)}`, url: url(params, query), body: text });
  }
  return cases;
}

/** The platform's error body; the Pix locations add the RFC 7807 members the Pix rules ask for. */
const isErrorBody = (body: unknown): boolean => {
  if (typeof body !== 'object' || body === null) return false;
  const { code, message, details, type: _type, title: _title, status: _status, detail: _detail, ...rest } = body as Record<string, unknown>;
  return typeof code === 'string' && /^[A-Z][A-Z_]*$/.test(code) && typeof message === 'string' && (details === undefined || Array.isArray(details)) && Object.keys(rest).length === 0;
};

async function inBatches<T>(items: T[], size: number, run: (item: T) => Promise<void>): Promise<void> {
  for (let i = 0; i < items.length; i += size) await Promise.all(items.slice(i, i + size).map(run));
}

test('every route of both OpenAPI documents refuses bad path, query and body values with a 4xx error body, changing nothing', async () => {
  const started = Date.now();
  const hosts = [
    { base: platform.holderUrl, headers: () => ({ 'x-tenant-id': tenantId, authorization: `Bearer ${alice.token}`, 'x-tenant-api-key': tenantKey, 'idempotency-key': randomUUID() }) },
    { base: platform.apiUrl, headers: () => ({ authorization: `Bearer ${aliceKey}`, 'idempotency-key': randomUUID() }) },
  ];
  const problems: string[] = [];
  let requests = 0;
  for (const host of hosts) {
    const operations = operationsOf((await http('GET', `${host.base}/openapi.json`)).body);
    expect(operations.length).toBeGreaterThan(5);
    const unknown = operations.filter((op) => !baselines[`${op.method} ${op.path}`]).map((op) => `${op.method} ${op.path}`);
    // A new route needs its valid inputs listed above, so that it is fuzzed too.
    expect(unknown).toEqual([]);
    for (const op of operations) {
      const before = await tenantState(tenantId);
      await inBatches(casesOf(host.base, op), 8, async (c) => {
        requests++;
        const accept: Record<string, string> = op.path.endsWith('/statement') ? { accept: 'text/csv' } : {};
        const res: HttpResult = await http(op.method, c.url, { headers: { ...host.headers(), ...accept }, ...(c.body === undefined ? {} : { body: c.body }) });
        if (res.status < 400 || res.status > 499 || !isErrorBody(res.body)) {
          problems.push(`${op.method} ${op.path} ${c.what}: ${res.status} ${JSON.stringify(res.body)?.slice(0, 200)}`);
        }
      });
      const after = await tenantState(tenantId);
      if (JSON.stringify(after) !== JSON.stringify(before)) problems.push(`${op.method} ${op.path}: the tenant changed`);
    }
  }
  expect(problems).toEqual([]);
  expect(requests).toBeGreaterThan(500);
  expect(Date.now() - started).toBeLessThan(45_000);
}, 60_000);
