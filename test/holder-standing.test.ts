/**
 * The api keeps the holder a token names, and its paying account's standing, between requests
 * (src/tenants/credential-cache.ts), and forgets them when the database announces a change
 * (src/identity/sql/holder_standing.sql), whichever code made it: here plain SQL, as an operator's fix would. Real
 * api, PostgreSQL and the sandbox PSP over HTTP.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import pg from 'pg';
import { closeDb, sql } from './support/db.ts';
import { fund, newTenant, onboarded, tenantHeaders, type Onboarded } from './support/fixtures.ts';
import { http } from './support/http.ts';
import { balanceOf, expectLedgerConsistent } from './support/ledger.ts';
import { startPlatform, type Platform } from './support/platform.ts';

let platform: Platform;
let tenantId: string;
let listener: pg.Client;
const heard: string[] = [];

beforeAll(async () => {
  platform = await startPlatform();
  tenantId = await newTenant(platform);
  listener = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
  await listener.connect();
  listener.on('notification', (n) => heard.push(n.payload ?? ''));
  await listener.query('listen credential_revoked');
}, 90_000);

afterAll(async () => {
  try {
    await expectLedgerConsistent(tenantId);
  } finally {
    await listener?.end();
    await platform?.stop();
    await closeDb();
  }
});

const pay = (h: Onboarded, amount = 0.01) =>
  http('POST', `${platform.holderUrl}/pix/payment`, {
    body: { accountId: h.account.id, pixKey: 'loja@example.com', pixKeyType: 'EMAIL', amount, pin: h.pin },
    headers: { ...tenantHeaders(tenantId, h.token), 'idempotency-key': randomUUID() },
  });

/**
 * Pays until the api answers `expected`, as it does once it has heard of a change: the database announces the change
 * at commit, and the api hears it a moment later. A payment sent in between gets the answer of what the api still
 * keeps, `meanwhile`: a payment from an account that may no longer pay is refused by the debit, which applies the same
 * rule on the row it locks (422 SOURCE_NOT_ACTIVE, nothing moved); one from an account that may pay again is refused
 * by the api's kept refusal. Either way nothing moves.
 */
async function answeredOnceHeard(h: Onboarded, expected: [number, string?], meanwhile: [number, string]): Promise<void> {
  const deadline = Date.now() + 5000;
  for (;;) {
    const res = await pay(h);
    const answer = expected.length === 1 ? [res.status] : [res.status, res.body.code];
    if (answer.every((part, i) => part === expected[i])) return;
    expect([res.status, res.body.code]).toEqual(meanwhile);
    if (Date.now() > deadline) throw new Error(`the api never answered ${expected.join(' ')}: still ${meanwhile.join(' ')}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** The notifications heard for this holder by the time the database has delivered what committed before. */
async function heardFor(holderId: string): Promise<string[]> {
  // A notification of our own, committed last, arrives after every one committed before it.
  const marker = `hld:marker-${randomUUID()}`;
  await sql('select pg_notify($1, $2)', ['credential_revoked', marker]);
  const deadline = Date.now() + 5000;
  while (!heard.includes(marker) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  return heard.filter((payload) => payload === `hld:${holderId}`);
}

describe('what the api keeps of a holder between requests', () => {
  test('a change of the holder or of its account reaches the next payment; a balance, an approver or a PIN attempt announces nothing', async () => {
    const payer = await onboarded(platform, tenantId);
    const approver = await onboarded(platform, tenantId);
    await fund(platform, tenantId, payer.account.id, 1_000);
    await heardFor(payer.holder.id); // the onboarding's own changes, delivered
    heard.length = 0;

    // Kept: a second payment reads neither the holder nor the account again. Their balances changed, silently.
    for (let i = 0; i < 2; i++) expect((await pay(payer)).status).toBe(201);
    expect(await balanceOf(payer.account.id)).toBe(998n);
    expect(await heardFor(payer.holder.id)).toEqual([]);

    // A wrong PIN counts an attempt on the holder's row: nothing the api keeps, so nothing is announced.
    const wrongPin = await pay({ ...payer, pin: '9999' });
    expect([wrongPin.status, wrongPin.body.code]).toEqual([403, 'INVALID_PIN']);
    expect(await heardFor(payer.holder.id)).toEqual([]);
    expect((await pay(payer)).status).toBe(201);

    await sql(`update account set status = 'REJECTED' where id = $1`, [payer.account.id]);
    await answeredOnceHeard(payer, [403, 'ACCOUNT_NOT_APPROVED'], [422, 'SOURCE_NOT_ACTIVE']);
    await sql(`update account set status = 'APPROVED' where id = $1`, [payer.account.id]);
    await answeredOnceHeard(payer, [201], [403, 'ACCOUNT_NOT_APPROVED']);

    // An approver is not kept, and its change announces nothing: the debit reads it on the row it locks, so the very
    // next payment is held, and the one after its removal pays.
    const announced = (await heardFor(payer.holder.id)).length;
    await sql('update account set approver_holder_id = $1 where id = $2', [approver.holder.id, payer.account.id]);
    expect(await heardFor(payer.holder.id)).toHaveLength(announced);
    const held = await pay(payer);
    expect(held.status).toBe(202);
    expect(held.body).toEqual(expect.objectContaining({ approvalRequestId: expect.any(String), status: 'PENDING' }));
    await sql('update account set approver_holder_id = null where id = $1', [payer.account.id]);
    expect((await pay(payer)).status).toBe(201);

    await sql(`update holder set status = 'BLOCKED' where id = $1`, [payer.holder.id]);
    await answeredOnceHeard(payer, [401, 'HOLDER_BLOCKED'], [422, 'SOURCE_NOT_ACTIVE']);
    await sql(`update holder set status = 'ACTIVE' where id = $1`, [payer.holder.id]);
    await answeredOnceHeard(payer, [201], [401, 'HOLDER_BLOCKED']);

    expect(await balanceOf(payer.account.id)).toBe(994n);
    // Each change announced once, at its commit: the account's status twice, the holder's twice.
    expect(await heardFor(payer.holder.id)).toHaveLength(4);
  });
});
