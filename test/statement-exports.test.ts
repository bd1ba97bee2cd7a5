import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { parse as parseCsv } from 'csv-parse/sync';
import { parse as parseOfx } from 'ofx-js';
import { extractText, getDocumentProxy } from 'unpdf';
import { closeDb, sql } from './support/db.ts';
import { fund, newTenant, onboarded, tenantHeaders, type Onboarded } from './support/fixtures.ts';
import { CLIENT_ADDRESS, http } from './support/http.ts';
import { startPlatform, type Platform } from './support/platform.ts';

let platform: Platform;
let alice: Onboarded;
let bob: Onboarded;
let mallory: Onboarded;
const today = new Date().toISOString().slice(0, 10);
const tomorrow = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
const DESCRIPTIONS = ['Aluguel, "março"', '=SOMA(A1:A9)', 'Pão de queijo\u00e7'];

beforeAll(async () => {
  platform = await startPlatform();
  const tenantId = await newTenant(platform);
  [alice, bob] = await Promise.all([onboarded(platform, tenantId), onboarded(platform, tenantId)]);
  mallory = await onboarded(platform, await newTenant(platform));
  await fund(platform, tenantId, alice.account.id, 50_000);
  for (const [i, description] of DESCRIPTIONS.entries()) {
    const res = await http('POST', `${platform.holderUrl}/accounts/${alice.account.id}/tev/payment`, {
      body: { accountNumber: bob.account.number, amount: 10 + i, pin: alice.pin, description },
      headers: tenantHeaders(alice.tenantId, alice.token),
    });
    expect(res.status).toBe(200);
  }
  await fund(platform, tenantId, alice.account.id, 1_234);
}, 90_000);
afterAll(async () => {
  await platform?.stop();
  await closeDb();
});

async function download(who: Onboarded, accept: string, startDate = today, endDate = today, accountId = who.account.id) {
  return fetch(`${platform.holderUrl}/accounts/${accountId}/statement?startDate=${startDate}&endDate=${endDate}`, {
    headers: { ...tenantHeaders(who.tenantId, who.token), accept, 'x-forwarded-for': CLIENT_ADDRESS },
  });
}

/** What the ledger says: the account's entries of the range summed, and its balance. */
async function ledger(accountId: string) {
  const [row] = await sql(
    `select (select sum(amount_cents) from ledger_entry where account_id = $1)::text as total,
            (select balance_cents from account where id = $1)::text as balance,
            (select array_agg(statement_id::text order by created_at, id) from movement where account_id = $1) as ids`,
    [accountId],
  );
  return { total: Number(row.total) / 100, balance: Number(row.balance) / 100, ids: row.ids as string[] };
}
const cents = (reais: string | number) => Math.round(Number(reais) * 100);

describe('GET /accounts/:accountId/statement', () => {
  test('CSV: RFC 4180 as csv-parse reads it, every transaction oldest first, totals equal to the ledger', async () => {
    const res = await download(alice, 'text/csv');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/csv; charset=utf-8/);
    expect(res.headers.get('content-disposition')).toBe(`attachment; filename="extrato-${alice.account.number}-${today}-${today}.csv"`);
    const text = await res.text();
    const rows = parseCsv(text, { columns: true, strict: true } as never) as Record<string, string>[];
    const { total, balance, ids } = await ledger(alice.account.id);
    expect(rows.map((r) => r.transactionId)).toEqual(ids);
    expect(rows.reduce((sum, r) => sum + cents(r.amount!), 0)).toBe(cents(total));
    expect(Number(rows.at(-1)!.balanceAfter)).toBe(balance);
    // Quotes and commas survive; a formula is shown, not run; accents are UTF-8.
    expect(rows.slice(1, 4).map((r) => r.description)).toEqual(['Aluguel, "março"', "'=SOMA(A1:A9)", 'Pão de queijo\u00e7']);
    expect(rows[1]).toMatchObject({ type: 'TEF', direction: 'DEBIT', amount: '-10.00', fee: '0.00', status: 'DONE' });
    for (const r of rows) expect(r.amount).toMatch(/^-?\d+\.\d{2}$/);
    expect(text.split('\r\n')[0]).toBe('date,createdAt,transactionId,type,direction,description,counterpart,amount,fee,balanceAfter,endToEndId,status');
  });

  test('OFX 1.0.2: read by ofx-js, each transaction once, its amounts and closing balance the ledger\'s', async () => {
    const res = await download(alice, 'application/x-ofx');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/x-ofx/);
    const ofx = await parseOfx(await res.text());
    expect(ofx.header).toMatchObject({ OFXHEADER: '100', DATA: 'OFXSGML', VERSION: '102', ENCODING: 'UTF-8' });
    const statement = ofx.OFX.BANKMSGSRSV1.STMTTRNRS.STMTRS;
    expect(statement.BANKACCTFROM).toEqual({ BANKID: alice.account.bank ?? '000', BRANCHID: alice.account.agency, ACCTID: alice.account.number, ACCTTYPE: 'CHECKING' });
    const transactions = [statement.BANKTRANLIST.STMTTRN].flat();
    const { total, balance, ids } = await ledger(alice.account.id);
    expect(transactions.map((t: any) => t.FITID)).toEqual(ids);
    expect(transactions.reduce((sum: number, t: any) => sum + cents(t.TRNAMT), 0)).toBe(cents(total));
    expect(cents(statement.LEDGERBAL.BALAMT)).toBe(cents(balance));
    expect(transactions[0]).toMatchObject({ TRNTYPE: 'CREDIT', TRNAMT: '500.00' });
    expect(transactions[1]).toMatchObject({ TRNTYPE: 'DEBIT', TRNAMT: '-10.00', MEMO: 'Aluguel, "março"' });
    expect(transactions[1].DTPOSTED).toMatch(/^\d{14}\[-3:BRT\]$/);
  });

  test('PDF: the opening balance, each day\'s balance and the closing one, read back from the file', async () => {
    const res = await download(alice, 'application/pdf');
    expect(res.status).toBe(200);
    const { text } = await extractText(await getDocumentProxy(new Uint8Array(await res.arrayBuffer())), { mergePages: true });
    const { balance } = await ledger(alice.account.id);
    const shown = `R$ ${balance.toFixed(2).replace('.', ',').replace(/\B(?=(\d{3})+(?!\d))/g, '.')}`;
    expect(text).toContain('Saldo anterior: R$ 0,00');
    expect(text).toContain('Saldo do dia');
    expect(text).toContain(`Saldo final: ${shown}`);
    expect(text).toContain('Aluguel, "março"');
  });

  test('a range after the movements: no transaction, the opening balance is the balance', async () => {
    const res = await download(alice, 'application/x-ofx', tomorrow, tomorrow);
    const statement = (await parseOfx(await res.text())).OFX.BANKMSGSRSV1.STMTTRNRS.STMTRS;
    expect(statement.BANKTRANLIST.STMTTRN).toBeUndefined();
    expect(cents(statement.LEDGERBAL.BALAMT)).toBe(cents((await ledger(alice.account.id)).balance));
    const csv = await (await download(alice, 'text/csv', tomorrow, tomorrow)).text();
    expect(csv).toBe('date,createdAt,transactionId,type,direction,description,counterpart,amount,fee,balanceAfter,endToEndId,status\r\n');
  });

  test('bad input: dates, ranges over a year, an Accept it does not answer; another holder or tenant: 404', async () => {
    const get = (who: Onboarded, query: string, accept = 'text/csv', accountId = who.account.id) =>
      http('GET', `${platform.holderUrl}/accounts/${accountId}/statement?${query}`, { headers: { ...tenantHeaders(who.tenantId, who.token), accept } });
    for (const query of ['startDate=2026-01-01', 'startDate=2026-02-30&endDate=2026-03-01', 'startDate=2026-03-01&endDate=2026-02-01', 'startDate=2026-01-01&endDate=2027-01-01', 'startDate=yesterday&endDate=today']) {
      const res = await get(alice, query);
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('VALIDATION_ERROR');
    }
    expect((await get(alice, 'startDate=2026-01-01&endDate=2026-12-31', 'text/csv')).status).toBe(200);
    expect((await get(alice, 'startDate=2024-02-29&endDate=2025-02-28', 'text/csv')).status).toBe(200);
    for (const accept of ['application/json', 'text/html', 'application/xml']) {
      const res = await get(alice, `startDate=${today}&endDate=${today}`, accept);
      expect(res.status).toBe(406);
      expect(res.body.code).toBe('NOT_ACCEPTABLE');
    }
    for (const who of [bob, mallory]) expect((await get(who, `startDate=${today}&endDate=${today}`, 'text/csv', alice.account.id)).status).toBe(404);
  });
});
