import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { closeDb, sql } from './support/db.ts';
import { fund, newTenant, onboarded, tenantHeaders, type Onboarded } from './support/fixtures.ts';
import { http } from './support/http.ts';
import { startPlatform, type Platform } from './support/platform.ts';

let platform: Platform;
let alice: Onboarded;
let bob: Onboarded;
let stranger: Onboarded;
beforeAll(async () => {
  platform = await startPlatform();
  const tenantId = await newTenant(platform);
  [alice, bob] = await Promise.all([onboarded(platform, tenantId), onboarded(platform, tenantId)]);
  stranger = await onboarded(platform, await newTenant(platform));
  await fund(platform, tenantId, alice.account.id, 10_000);
  for (const amount of [12.34, 0.01, 7]) {
    const res = await http('POST', `${platform.holderUrl}/accounts/${alice.account.id}/tev/payment`, {
      body: { accountNumber: bob.account.number, amount, pin: alice.pin },
      headers: tenantHeaders(alice.tenantId, alice.token),
    });
    expect(res.status).toBe(200);
  }
  await fund(platform, tenantId, alice.account.id, 555);
}, 90_000);
afterAll(async () => {
  await platform?.stop();
  await closeDb();
});

const balance = (who: Onboarded, accountId: string, at?: string) =>
  http('GET', `${platform.holderUrl}/accounts/${accountId}/balance${at === undefined ? '' : `?at=${encodeURIComponent(at)}`}`, { headers: tenantHeaders(who.tenantId, who.token) });

/** The sum of the account's entries whose time, to the millisecond, is not after `at`: what the balance must equal. */
async function sumOfEntries(accountId: string, at: string): Promise<number> {
  const [row] = await sql(
    `select coalesce(sum(amount_cents), 0)::text as cents from ledger_entry
      where account_id = $1 and date_trunc('milliseconds', created_at) <= $2::timestamptz`,
    [accountId, at],
  );
  return Number(row.cents) / 100;
}

describe('GET /accounts/:accountId/balance', () => {
  test('at each movement and between them, the balance is the sum of the entries up to that instant', async () => {
    const movements = await sql(
      `select statement_id, to_char(created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as at
         from movement where account_id = $1 order by created_at`,
      [alice.account.id],
    );
    expect(movements).toHaveLength(5);
    for (const [i, m] of movements.entries()) {
      // The instant of the movement itself includes it.
      const res = await balance(alice, alice.account.id, m.at);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ accountId: alice.account.id, at: m.at, balance: await sumOfEntries(alice.account.id, m.at), lastTransactionId: m.statement_id });
      // A millisecond before it, the one before is the last (none before the first).
      const before = new Date(Date.parse(m.at) - 1).toISOString();
      const earlier = await balance(alice, alice.account.id, before);
      expect(earlier.body).toEqual({ accountId: alice.account.id, at: before, balance: await sumOfEntries(alice.account.id, before), lastTransactionId: i === 0 ? null : movements[i - 1].statement_id });
    }
    const first = await balance(alice, alice.account.id, new Date(Date.parse(movements[0].at) - 1).toISOString());
    expect(first.body.balance).toBe(0);
    // 100.00 in, three TEVs out, 5.55 in.
    const last = await balance(alice, alice.account.id, '2999-01-01T00:00:00-03:00');
    expect(last.body).toMatchObject({ balance: 86.2, lastTransactionId: movements[4].statement_id, at: '2999-01-01T03:00:00.000Z' });
  });

  test('an offset and a finer fraction are read as the same instant, to the millisecond', async () => {
    const [m] = await sql(
      `select statement_id, to_char(created_at at time zone 'America/Sao_Paulo', 'YYYY-MM-DD"T"HH24:MI:SS.MS') || '999-03:00' as at
         from movement where account_id = $1 order by created_at limit 1`,
      [alice.account.id],
    );
    const res = await balance(alice, alice.account.id, m.at);
    expect(res.body).toMatchObject({ balance: 100, lastTransactionId: m.statement_id });
  });

  test('without at, the current balance: the account\'s own', async () => {
    const res = await balance(alice, alice.account.id);
    const [account] = await sql('select balance_cents::text from account where id = $1', [alice.account.id]);
    const [newest] = await sql('select statement_id from movement where account_id = $1 order by created_at desc limit 1', [alice.account.id]);
    expect(res.body).toEqual({ accountId: alice.account.id, at: null, balance: Number(account.balance_cents) / 100, lastTransactionId: newest.statement_id });
    const none = await balance(stranger, stranger.account.id);
    expect(none.body).toEqual({ accountId: stranger.account.id, at: null, balance: 0, lastTransactionId: null });
  });

  test('one indexed read', async () => {
    const plan = await sql(
      `explain (format json) select m.statement_id, m.balance_after_cents from movement m
        where m.account_id = $1 and m.created_at < date_trunc('milliseconds', $2::timestamptz) + interval '1 millisecond'
        order by m.created_at desc, m.id desc limit 1`,
      [alice.account.id, new Date().toISOString()],
    );
    const text = JSON.stringify(plan);
    expect(text).toContain('movement_statement_idx');
    expect(text).not.toContain('"Sort"');
  });

  test('another holder, another tenant: 404; a bad instant: 400', async () => {
    expect((await balance(bob, alice.account.id)).status).toBe(404);
    expect((await balance(stranger, alice.account.id)).status).toBe(404);
    for (const at of ['yesterday', '2026-11-22', '2026-11-22T10:00:00', '2026-13-01T00:00:00Z', '2026-11-22T25:00:00Z']) {
      const res = await balance(alice, alice.account.id, at);
      expect(res.status).toBe(400);
      expect(res.body.details[0].path).toBe('query.at');
    }
  });
});
