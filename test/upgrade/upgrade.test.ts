import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { PASSWORD, PIN, tenantHeaders, waitFor } from '../support/fixtures.ts';
import { http } from '../support/http.ts';
import { expectLedgerConsistent } from '../support/ledger.ts';
import { startPlatform, type Platform } from '../support/platform.ts';
import { baselineDirs, readBaselineManifest, restoreBaseline, schemaFingerprint } from './baseline.ts';
import { withClient } from './dump.ts';

/**
 * An operator's upgrade, in place: a database of the previous landed version with realistic data (holders, KYC, TEV,
 * Pix sent, failed and returned, charges and refunds, approvals, webhooks, a hand-off Temporal has not taken yet;
 * test/upgrade/baselines/, made by make-baseline.ts) is upgraded by `npm run migrate`, the command the README gives.
 * It must keep every cent and row, end with exactly the schema and functions of a fresh database, and run the flows.
 * (The flow suites run on such an upgraded database too: `npm run test:upgraded`, through test/global-setup.ts.)
 */
const latest = baselineDirs().at(-1)!;
const manifest = readBaselineManifest(latest);

const serverUrl = new URL(process.env.TEST_DATABASE_URL!);
const urlOf = (database: string) => Object.assign(new URL(serverUrl), { pathname: `/${database}` }).toString();
const suffix = randomUUID().slice(0, 8);
const upgradedUrl = urlOf(`upgraded_${suffix}`);
const freshUrl = urlOf(`fresh_${suffix}`);

const query = <T = any>(databaseUrl: string, text: string, params: unknown[] = []): Promise<T[]> =>
  withClient(databaseUrl, async (client) => (await client.query(text, params)).rows as T[]);

const migrate = (databaseUrl: string) =>
  JSON.parse(execFileSync(process.execPath, ['scripts/migrate.ts'], { env: { ...process.env, DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn' }, encoding: 'utf8' }).trim().split('\n').pop()!) as {
    applied: string[];
  };

/** What must survive an upgrade untouched: the ledger, the money records and every table's rows. */
async function moneyRecords(databaseUrl: string) {
  // `omit`: columns an upgrade rewrites on purpose, checked by a test of their own.
  const digest = async (table: string, omit: string[] = []) =>
    (
      await query<{ md5: string; n: string }>(
        databaseUrl,
        `select md5(coalesce(string_agg(r::text, '|' order by r::text), '')) as md5, count(*)::text as n from (select to_jsonb(t) - $1::text[] as r from ${table} t) x`,
        [omit],
      )
    )[0];
  return {
    balances: await query(databaseUrl, 'select id, tenant_id, balance_cents::text from account order by id'),
    ledgerEntries: await digest('ledger_entry'),
    movements: await digest('movement'),
    // The request hash takes the form of requestHash (migration 20261124000950): a retry still answers as before (below).
    transfers: await digest('tev_transfer', ['request_hash']),
    payouts: await query(databaseUrl, 'select id, status, amount_cents::text, fee_cents::text from pix_payout order by id'),
    charges: await query(databaseUrl, 'select id, status from pix_charge order by id'),
    approvals: await query(databaseUrl, 'select id, status from approval_request order by id'),
    webhooks: await digest('webhook_endpoint'),
  };
}

let upgradedBefore: Awaited<ReturnType<typeof moneyRecords>>;
let platform: Platform | undefined;

beforeAll(async () => {
  await query(process.env.TEST_DATABASE_URL!, `create database ${pg.escapeIdentifier(`upgraded_${suffix}`)}`);
  await query(process.env.TEST_DATABASE_URL!, `create database ${pg.escapeIdentifier(`fresh_${suffix}`)}`);
  await restoreBaseline(upgradedUrl, latest);
  upgradedBefore = await moneyRecords(upgradedUrl);
}, 120_000);

afterAll(async () => {
  await platform?.stop();
  for (const db of [`upgraded_${suffix}`, `fresh_${suffix}`]) await query(process.env.TEST_DATABASE_URL!, `drop database if exists ${pg.escapeIdentifier(db)} with (force)`);
});

describe(`upgrade in place from ${manifest.commit.slice(0, 10)}`, () => {
  it('the baseline holds realistic data of every kind, a hand-off still to start included', async () => {
    const counts = await query<{ table: string; n: number }>(
      upgradedUrl,
      `select t as table, (xpath('/row/n/text()', query_to_xml(format('select count(*) as n from %I', t), false, true, '')))[1]::text::int as n
         from unnest($1::text[]) t`,
      [['tenant', 'holder', 'account', 'movement', 'ledger_entry', 'tev_transfer', 'pix_payout', 'pix_charge', 'pix_charge_refund', 'approval_request', 'webhook_endpoint', 'webhook_delivery', 'event_outbox', 'fee_schedule']],
    );
    for (const { table, n } of counts) expect([table, n > 0]).toEqual([table, true]);
    expect(await query(upgradedUrl, 'select count(*)::int as n from workflow_start')).toEqual([{ n: 1 }]);
  });

  it('npm run migrate upgrades it to exactly the schema and functions of a fresh database, keeping every cent and row', async () => {
    const { applied } = migrate(upgradedUrl);
    migrate(freshUrl);
    // Whatever this version added since the baseline is what the upgrade applied, and nothing is left for a second run.
    expect(applied.filter((name) => name.startsWith('Migration'))).toEqual(
      (await query<{ name: string }>(upgradedUrl, 'select name from schema_migration order by id')).map((r) => r.name).slice(manifest.migrations.length),
    );
    expect(migrate(upgradedUrl).applied).toEqual([]);

    expect(await schemaFingerprint(upgradedUrl)).toEqual(await schemaFingerprint(freshUrl));
    expect(await query(upgradedUrl, 'select name, checksum from schema_function order by name')).toEqual(
      await query(freshUrl, 'select name, checksum from schema_function order by name'),
    );

    expect(await moneyRecords(upgradedUrl)).toEqual(upgradedBefore);
    for (const { id } of await query<{ id: string }>(upgradedUrl, 'select id from tenant')) {
      await expectLedgerConsistent(id, (text, params) => query(upgradedUrl, text, params));
    }
  }, 120_000);

  it('the upgraded platform finishes the payout the previous version left in flight, and its holders log in and move money', async () => {
    // The previous version's worker had not taken this payout's hand-off; the new one, on the same task queue, does.
    const [inFlight] = await query<{ task_queue: string; payout_id: string }>(
      upgradedUrl,
      `select w.task_queue, p.id as payout_id from workflow_start w join pix_payout p on w.workflow_id = 'pix-payout-' || p.id`,
    );
    expect(inFlight).toBeDefined();
    platform = await startPlatform({ DATABASE_URL: upgradedUrl, TEMPORAL_TASK_QUEUE: inFlight!.task_queue });
    await waitFor(
      async () => ((await query(upgradedUrl, `select 1 from pix_payout where id = $1 and status = 'POSTED'`, [inFlight!.payout_id])).length === 1 ? true : undefined),
      60_000,
      'the in-flight payout settled',
    );
    expect(await query(upgradedUrl, 'select count(*)::int as n from workflow_start')).toEqual([{ n: 0 }]);

    // Two approved holders of one tenant, the payer with money and no approver, as the previous version left them.
    const holders = await query<{ tenant_id: string; document: string; account_id: string; number: string; balance: string; approver: string | null }>(
      upgradedUrl,
      `select h.tenant_id, h.document, a.id as account_id, a.number, a.balance_cents::text as balance, a.approver_holder_id as approver
         from holder h join account a on a.holder_id = h.id
        where a.status = 'APPROVED' and h.status = 'ACTIVE'
        order by a.balance_cents desc`,
    );
    const payer = holders.find((h) => h.approver === null && BigInt(h.balance) >= 1_000n)!;
    const payee = holders.find((h) => h.tenant_id === payer.tenant_id && h.account_id !== payer.account_id)!;
    const login = await http('POST', `${platform.holderUrl}/authenticate`, {
      body: { document: payer.document, password: PASSWORD },
      headers: tenantHeaders(payer.tenant_id),
    });
    expect(login.status).toBe(200);
    const sent = await http('POST', `${platform.holderUrl}/accounts/${payer.account_id}/tev/payment`, {
      body: { accountNumber: payee.number, amount: 1.23, pin: PIN },
      headers: { ...tenantHeaders(payer.tenant_id, login.body.token), 'idempotency-key': randomUUID() },
    });
    expect([sent.status, sent.body.tev?.status]).toEqual([200, 'DONE']);
    const [after] = await query<{ payer: string; payee: string }>(
      upgradedUrl,
      'select (select balance_cents::text from account where id = $1) as payer, (select balance_cents::text from account where id = $2) as payee',
      [payer.account_id, payee.account_id],
    );
    // The tenant charges fees on both sides of a TEV: the payer pays the amount and its fee, the payee receives the
    // amount less its receive fee, each as the entries of its side say.
    expect(BigInt(after!.payer)).toBe(BigInt(payer.balance) - 123n - BigInt(sent.body.tev.feeCents));
    const received = await query<{ kind: string; amount: string }>(
      upgradedUrl,
      `select e.kind, e.amount_cents::text as amount from ledger_entry e join tev_transfer t on e.movement_id = t.destination_movement_id
        where t.id = $1 order by e.line`,
      [sent.body.tev.tevId],
    );
    expect(received[0]).toEqual({ kind: 'PRIMARY', amount: '123' });
    expect(BigInt(after!.payee)).toBe(BigInt(payee.balance) + received.reduce((sum, e) => sum + BigInt(e.amount), 0n));
    await expectLedgerConsistent(payer.tenant_id, (text, params) => query(upgradedUrl, text, params));
  }, 120_000);

  it("a TEV the previous version recorded, sent again with its Idempotency-Key, answers as it did: its request's hash was carried over", async () => {
    // Recorded by the holder API with a description, so its old hash covered the description as sent.
    const [recorded] = await query<{ id: string; tenant_id: string; source_id: string; document: string; number: string; idempotency_key: string; balance: string }>(
      upgradedUrl,
      `select t.id, t.tenant_id, t.source_account_id as source_id, h.document, d.number, t.idempotency_key, s.balance_cents::text as balance
         from tev_transfer t join account s on s.id = t.source_account_id join holder h on h.id = s.holder_id
         join account d on d.id = t.destination_account_id
        where t.origin = 'HOLDER_API' and t.description = 'Encomenda de pães' and t.status = 'DONE'`,
    );
    expect(recorded).toBeDefined();
    const login = await http('POST', `${platform!.holderUrl}/authenticate`, {
      body: { document: recorded!.document, password: PASSWORD },
      headers: tenantHeaders(recorded!.tenant_id),
    });
    const retry = (body: Record<string, unknown>) =>
      http('POST', `${platform!.holderUrl}/accounts/${recorded!.source_id}/tev/payment`, {
        body: { accountNumber: recorded!.number, pin: PIN, ...body },
        headers: { ...tenantHeaders(recorded!.tenant_id, login.body.token), 'idempotency-key': recorded!.idempotency_key },
      });
    const again = await retry({ amount: 123.45, description: 'Encomenda de pães' });
    expect([again.status, again.body.tev?.tevId, again.body.tev?.status]).toEqual([200, recorded!.id, 'DONE']);
    const other = await retry({ amount: 123.46, description: 'Encomenda de pães' });
    expect([other.status, other.body.code]).toEqual([409, 'IDEMPOTENCY_KEY_REUSED']);
    expect(await query(upgradedUrl, 'select balance_cents::text as balance from account where id = $1', [recorded!.source_id])).toEqual([{ balance: recorded!.balance }]);
  }, 60_000);
});
