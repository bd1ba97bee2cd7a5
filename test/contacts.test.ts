/**
 * Trusted contacts over real HTTP: added with the PIN, listed and removed; trusted only once the delayed-effect
 * workflow applied it after the wait (TRUSTED_CONTACT_DELAY_MS, a few seconds here); the TEV beneficiary lookup and
 * the Pix payment answer say whether the receiver is trusted; refused input changes nothing. Real api, worker,
 * Temporal, PostgreSQL and the sandbox PSP.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { Client, Connection } from '@temporalio/client';
import { delayedEffectWorkflowId } from '../workflows/contracts/delayed-effect.ts';
import { closeDb, sql } from './support/db.ts';
import { fund, newTenant, onboarded, PIN, tenantHeaders, waitFor, type Onboarded } from './support/fixtures.ts';
import { http } from './support/http.ts';
import { startPlatform, type Platform } from './support/platform.ts';

const DELAY_MS = 3_000;

let platform: Platform;
let connection: Connection;
let temporal: Client;
let tenantId: string;
let payer: Onboarded;
let receiver: Onboarded;

beforeAll(async () => {
  platform = await startPlatform({ TRUSTED_CONTACT_DELAY_MS: String(DELAY_MS), SANDBOX_PIX_SETTLE_MS: '300' });
  connection = await Connection.connect({ address: process.env.TEST_TEMPORAL_ADDRESS! });
  temporal = new Client({ connection });
  tenantId = await newTenant(platform);
  [payer, receiver] = await Promise.all([onboarded(platform, tenantId), onboarded(platform, tenantId)]);
  await fund(platform, tenantId, payer.account.id, 100_000);
}, 120_000);

afterAll(async () => {
  await connection?.close();
  await platform?.stop();
  await closeDb();
});

const contactsUrl = (accountId: string) => `${platform.holderUrl}/accounts/${accountId}/contacts`;
const add = (holder: Onboarded, body: Record<string, unknown>, accountId = holder.account.id) =>
  http('POST', contactsUrl(accountId), { body, headers: tenantHeaders(tenantId, holder.token) });
const list = (holder: Onboarded, accountId = holder.account.id) => http('GET', contactsUrl(accountId), { headers: tenantHeaders(tenantId, holder.token) });
const remove = (holder: Onboarded, contactId: string, accountId = holder.account.id) =>
  http('DELETE', `${contactsUrl(accountId)}/${contactId}`, { headers: tenantHeaders(tenantId, holder.token) });
const contactRows = async (accountId: string) => (await sql<{ n: number }>('select count(*)::int as n from trusted_contact where account_id = $1', [accountId]))[0]!.n;

const beneficiary = async () => {
  const res = await http('POST', `${platform.holderUrl}/accounts/${payer.account.id}/tev/beneficiary`, {
    body: { document: receiver.document },
    headers: tenantHeaders(tenantId, payer.token),
  });
  expect(res.status).toBe(200);
  return res.body.beneficiary.accounts[0];
};

const payKey = async (pixKey: string) => {
  const res = await http('POST', `${platform.holderUrl}/pix/payment`, {
    body: { accountId: payer.account.id, pixKey, pixKeyType: 'EMAIL', amount: 1.5, pin: payer.pin },
    headers: tenantHeaders(tenantId, payer.token),
  });
  expect(res.status).toBe(201);
  return res.body.payout;
};

/** Until the listing shows the contact trusted: its delayed-effect workflow ran. */
const trusted = (holder: Onboarded, contactId: string) =>
  waitFor(async () => (await list(holder)).body.contacts.find((c: { id: string; trusted: boolean }) => c.id === contactId && c.trusted), 30_000, 'the contact trusted');

describe('a Pix key contact', () => {
  test('is added with the PIN, waits, and becomes trusted through its workflow only once its wait is over', async () => {
    const added = await add(payer, { kind: 'PIX_KEY', pixKey: 'Padaria@Example.com', pixKeyType: 'EMAIL', pin: payer.pin });
    expect(added.status).toBe(201);
    const contact = added.body;
    expect(contact).toMatchObject({ kind: 'PIX_KEY', pixKey: 'padaria@example.com', pixKeyType: 'EMAIL', branch: null, account: null, trusted: false, trustedFrom: null, removedAt: null });
    expect(Date.parse(contact.trustsAt) - Date.parse(contact.createdAt)).toBe(DELAY_MS);
    expect((await list(payer)).body.contacts).toContainEqual(contact);
    // Waiting: a payment to it is not a trusted contact's.
    expect((await payKey('padaria@example.com')).trustedContact).toBe(false);

    const done = await trusted(payer, contact.id);
    expect(Date.parse(done.trustedFrom)).toBeGreaterThanOrEqual(Date.parse(contact.trustsAt));
    expect((await payKey('padaria@example.com')).trustedContact).toBe(true);
    expect((await payKey('mercado@example.com')).trustedContact).toBe(false);

    // Found in the Temporal UI by the account and the contact, and applied once.
    const runs = [];
    for await (const run of temporal.workflow.list({ query: `AccountId = "${payer.account.id}" AND DelayedEffectId = "${contact.id}"` })) runs.push(run.workflowId);
    expect(runs).toEqual([delayedEffectWorkflowId('TRUSTED_CONTACT', contact.id)]);
    expect(await temporal.workflow.getHandle(runs[0]!).result()).toBe('APPLIED');
  });

  test('removed during its wait: gone from the listing, its workflow ends CANCELLED, and it is never trusted', async () => {
    const contact = (await add(payer, { kind: 'PIX_KEY', pixKey: '+5511987654321', pixKeyType: 'PHONE', pin: payer.pin })).body;
    const removed = await remove(payer, contact.id);
    expect(removed.status).toBe(200);
    expect(removed.body).toMatchObject({ id: contact.id, trusted: false, trustedFrom: null, removedAt: expect.any(String) });
    expect((await list(payer)).body.contacts.map((c: { id: string }) => c.id)).not.toContain(contact.id);
    const run = temporal.workflow.getHandle(delayedEffectWorkflowId('TRUSTED_CONTACT', contact.id));
    expect(await waitFor(() => run.result().catch(() => undefined), 20_000, 'the run ended')).toBe('CANCELLED');
    expect((await sql('select trusted_from from trusted_contact where id = $1', [contact.id]))[0].trusted_from).toBeNull();
    // Removed already: 404; added again: a new contact, with a new wait.
    expect((await remove(payer, contact.id)).status).toBe(404);
    const again = await add(payer, { kind: 'PIX_KEY', pixKey: '+5511987654321', pixKeyType: 'PHONE', pin: payer.pin });
    expect(again.status).toBe(201);
    expect(again.body.id).not.toBe(contact.id);
  });

  test('added while the worker is down: the request needs no Temporal, and the contact is trusted once a worker runs', async () => {
    await platform.stopWorker();
    let contact;
    try {
      const added = await add(payer, { kind: 'PIX_KEY', pixKey: 'd5b0a8e4-3c2f-4e1a-9b7d-6f5e4d3c2b1a', pixKeyType: 'EVP', pin: payer.pin });
      expect(added.status).toBe(201);
      contact = added.body;
    } finally {
      await platform.startWorker();
    }
    await trusted(payer, contact.id);
  });
});

describe('an account contact', () => {
  test('is an account of the tenant by branch and number, zeros or not; the TEV beneficiary lookup says when it is trusted', async () => {
    expect(await beneficiary()).toMatchObject({ id: receiver.account.id, trustedContact: false });
    const added = await add(payer, { kind: 'ACCOUNT', branch: '1', account: `00${receiver.account.number}`, pin: payer.pin });
    expect(added.status).toBe(201);
    expect(added.body).toMatchObject({ kind: 'ACCOUNT', branch: receiver.account.agency, account: receiver.account.number, pixKey: null, pixKeyType: null });
    expect(await beneficiary()).toMatchObject({ trustedContact: false });
    await trusted(payer, added.body.id);
    expect(await beneficiary()).toMatchObject({ id: receiver.account.id, trustedContact: true });
    // Removed: no longer trusted.
    expect((await remove(payer, added.body.id)).status).toBe(200);
    expect(await beneficiary()).toMatchObject({ trustedContact: false });
  });
});

describe('refused, with nothing changed', () => {
  let outsider: Onboarded;
  let before: number;
  beforeAll(async () => {
    outsider = await onboarded(platform, tenantId);
    before = await contactRows(payer.account.id);
  });

  test.each([
    ['no PIN', 400, 'VALIDATION_ERROR', { kind: 'PIX_KEY', pixKey: 'a@example.com', pixKeyType: 'EMAIL' }],
    ['a wrong PIN', 403, 'INVALID_PIN', { kind: 'PIX_KEY', pixKey: 'a@example.com', pixKeyType: 'EMAIL', pin: '9137' }],
    ['a key that is not of its type', 400, 'VALIDATION_ERROR', { kind: 'PIX_KEY', pixKey: 'not-an-email', pixKeyType: 'EMAIL', pin: PIN }],
    ['a CPF key with wrong check digits', 400, 'VALIDATION_ERROR', { kind: 'PIX_KEY', pixKey: '11144477736', pixKeyType: 'CPF', pin: PIN }],
    ['control characters in the key', 400, 'VALIDATION_ERROR', { kind: 'PIX_KEY', pixKey: 'a\u0000b@example.com', pixKeyType: 'EMAIL', pin: PIN }],
    ['control characters in the account', 400, 'VALIDATION_ERROR', { kind: 'ACCOUNT', branch: '0001', account: '12\u00073', pin: PIN }],
    ['an unknown kind', 400, 'VALIDATION_ERROR', { kind: 'PHONE_BOOK', pixKey: 'a@example.com', pin: PIN }],
    ['an account the tenant does not have', 400, 'DESTINATION_NOT_FOUND', { kind: 'ACCOUNT', branch: '0001', account: '999999999', pin: PIN }],
  ])('%s: %i %s', async (_case, status, code, body) => {
    const res = await add(payer, body);
    expect(res.status).toBe(status);
    expect(res.body.code).toBe(code);
    expect(await contactRows(payer.account.id)).toBe(before);
  });

  test('its own account: 400 SAME_ACCOUNT', async () => {
    const res = await add(payer, { kind: 'ACCOUNT', branch: payer.account.agency, account: payer.account.number, pin: PIN });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('SAME_ACCOUNT');
    expect(await contactRows(payer.account.id)).toBe(before);
  });

  test('the same key twice: 409, the first one kept', async () => {
    const first = await add(payer, { kind: 'PIX_KEY', pixKey: 'dup@example.com', pixKeyType: 'EMAIL', pin: payer.pin });
    expect(first.status).toBe(201);
    const second = await add(payer, { kind: 'PIX_KEY', pixKey: 'DUP@example.com', pixKeyType: 'EMAIL', pin: payer.pin });
    expect(second.status).toBe(409);
    expect(second.body.code).toBe('CONTACT_ALREADY_EXISTS');
    expect(await contactRows(payer.account.id)).toBe(before + 1);
  });

  test("another holder's account, or another account's contact: 404, as if it did not exist", async () => {
    const theirs = (await add(outsider, { kind: 'PIX_KEY', pixKey: 'theirs@example.com', pixKeyType: 'EMAIL', pin: outsider.pin })).body;
    const count = await contactRows(outsider.account.id);
    const intruding = [
      await add(payer, { kind: 'PIX_KEY', pixKey: 'x@example.com', pixKeyType: 'EMAIL', pin: payer.pin }, outsider.account.id),
      await list(payer, outsider.account.id),
      await remove(payer, theirs.id, outsider.account.id),
      await remove(payer, theirs.id),
    ];
    for (const res of intruding) {
      expect(res.status).toBe(404);
      expect(res.body.code).toBe('NOT_FOUND');
    }
    expect(await contactRows(outsider.account.id)).toBe(count);
    expect((await list(outsider)).body.contacts.map((c: { id: string }) => c.id)).toContain(theirs.id);
  });

  test('a contact id that is not a UUID, and a cursor not of this listing: 400', async () => {
    expect((await remove(payer, 'abc')).body.code).toBe('VALIDATION_ERROR');
    const res = await http('GET', `${contactsUrl(payer.account.id)}?cursor=forged.${'x'.repeat(43)}`, { headers: tenantHeaders(tenantId, payer.token) });
    expect(res.status).toBe(400);
  });
});

describe('the listing', () => {
  test('pages newest first with a cursor', async () => {
    const holder = await onboarded(platform, tenantId);
    const ids = [];
    for (const key of ['one@example.com', 'two@example.com', 'three@example.com']) {
      ids.push((await add(holder, { kind: 'PIX_KEY', pixKey: key, pixKeyType: 'EMAIL', pin: holder.pin })).body.id);
    }
    const first = await http('GET', `${contactsUrl(holder.account.id)}?limit=2`, { headers: tenantHeaders(tenantId, holder.token) });
    expect(first.body.contacts.map((c: { id: string }) => c.id)).toEqual([ids[2], ids[1]]);
    expect(first.body.pagination).toMatchObject({ limit: 2, hasMore: true });
    const next = await http('GET', `${contactsUrl(holder.account.id)}?limit=2&cursor=${first.body.pagination.nextCursor}`, { headers: tenantHeaders(tenantId, holder.token) });
    expect(next.body.contacts.map((c: { id: string }) => c.id)).toEqual([ids[0]]);
    expect(next.body.pagination).toEqual({ limit: 2, nextCursor: null, hasMore: false });
  });
});
