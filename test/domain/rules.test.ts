/**
 * The rules every posting and the API's checks share, each asserted once where it lives: the SQL functions of
 * src/ledger/sql/rules.sql, on the run's database. The postings' tests assert what each posting does with them.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, test } from '@jest/globals';
import { Account } from '../../src/accounts/entities.ts';
import { setFees } from '../../src/fees/service.ts';
import { schedulesInForce } from '../../src/fees/store.ts';
import { insertHandOffs } from '../../src/handoff/store.ts';
import { setBlocked } from '../../src/identity/service.ts';
import { PLATFORM_ISPB } from '../../src/shared/institution.ts';
import { sql } from '../support/db.ts';
import { domainDatabase, onboardedHolder, tenantAccountId } from './support/accounts.ts';

const db = domainDatabase();

describe('account_refusal: may money move out of or into a holder account', () => {
  test.each([
    ['APPROVED', 'ACTIVE', 'DONE', null],
    ['APPROVED', 'BLOCKED', 'DONE', 'HOLDER_BLOCKED'],
    ['APPROVED', 'CLOSED', 'DONE', 'HOLDER_BLOCKED'],
    ['PENDING', 'BLOCKED', 'PENDING', 'HOLDER_BLOCKED'],
    ['PENDING', 'PENDING', 'PENDING', 'ONBOARDING_INCOMPLETE'],
    ['APPROVED', 'ACTIVE', 'IN_PROGRESS', 'ONBOARDING_INCOMPLETE'],
    ['PENDING', 'ACTIVE', 'DONE', 'ACCOUNT_NOT_APPROVED'],
    ['REJECTED', 'ACTIVE', 'DONE', 'ACCOUNT_NOT_APPROVED'],
    // The tenant's own accounts have no holder: never a holder account that may move money.
    ['APPROVED', null, null, 'ONBOARDING_INCOMPLETE'],
  ])('account %s, holder %s, onboarding %s: %s', async (account, holder, step, refusal) => {
    const [row] = await sql<{ refusal: string | null; may_move: boolean }>(
      'select account_refusal($1, $2, $3) as refusal, account_may_move_money($1, $2, $3) as may_move',
      [account, holder, step],
    );
    expect(row).toEqual({ refusal, may_move: refusal === null });
  });

  test("the API's checks read it with the account (moneyRefusal), in the query that loads it", async () => {
    const tenantId = await db.tenant();
    const active = await onboardedHolder(db.em(), tenantId);
    expect((await db.em().findOneOrFail(Account, { id: active.accountId })).moneyRefusal).toBeNull();
    await setBlocked(db.em(), tenantId, active.document, true);
    expect((await db.em().findOneOrFail(Account, { id: active.accountId })).moneyRefusal).toBe('HOLDER_BLOCKED');
    const revenue = await db.em().findOneOrFail(Account, { id: await tenantAccountId(tenantId, 'FEE_REVENUE') });
    expect(revenue.moneyRefusal).toBe('ONBOARDING_INCOMPLETE');
  });
});

test('holder_account_by_number: the branch with or without its leading zeros, the number without them', async () => {
  const tenantId = await db.tenant();
  const holder = await onboardedHolder(db.em(), tenantId);
  const find = async (branch: string, account: string) =>
    (await sql<{ id: string | null }>('select holder_account_by_number($1, $2, $3) as id', [tenantId, branch, account]))[0]!.id;
  const branch = holder.agency.replace(/^0+/, '');
  expect(await find(holder.agency, holder.number)).toBe(holder.accountId);
  expect(await find(branch, `00${holder.number}`)).toBe(holder.accountId);
  expect(await find(`0${holder.agency}`, holder.number)).toBe(holder.accountId);
  expect(await find(holder.agency, `${holder.number}9`)).toBeNull();
  // Another tenant's account by the same numbers is not found.
  expect((await sql('select holder_account_by_number($1, $2, $3) as id', [await db.tenant(), holder.agency, holder.number]))[0].id).toBeNull();
});

test("fee_schedule_of: the account's own value, else its tenant's, else 0, field by field; fees/store reads it", async () => {
  const tenantId = await db.tenant({ tevOut: 50n, pixOut: 30n });
  const [own, plain] = await Promise.all([onboardedHolder(db.em(), tenantId), onboardedHolder(db.em(), tenantId)]);
  await setFees(db.em(), tenantId, own.accountId, { tevOut: 10n, qrOut: 5n });
  const of = async (accountId: string, tenant = tenantId) => (await sql('select f.* from fee_schedule_of($1, $2) f', [accountId, tenant]))[0];
  expect(await of(own.accountId)).toEqual({ tev_out: '10', tev_in: '0', pix_out: '30', pix_in: '0', qr_out: '5' });
  expect(await of(plain.accountId)).toEqual({ tev_out: '50', tev_in: '0', pix_out: '30', pix_in: '0', qr_out: '0' });
  // An account's own value counts only in its tenant; a tenant without a schedule charges nothing.
  expect(await of(own.accountId, await db.tenant())).toEqual({ tev_out: '0', tev_in: '0', pix_out: '0', pix_in: '0', qr_out: '0' });
  const inForce = await schedulesInForce(db.em(), [own.accountId, plain.accountId]);
  expect(inForce.get(own.accountId)).toEqual({ tevOut: 10n, tevIn: 0n, pixOut: 30n, pixIn: 0n, qrOut: 5n });
  expect(inForce.get(plain.accountId)).toEqual({ tevOut: 50n, tevIn: 0n, pixOut: 30n, pixIn: 0n, qrOut: 0n });
});

test('record_workflow_starts: keyed by workflow id (and signal), recorded again with a new version, due now or after 2 s', async () => {
  const id = `rules-${randomUUID()}`;
  const start = { workflowType: 'noop', workflowId: id, args: [1], searchAttributes: {}, reusePolicy: 'REJECT_DUPLICATE' as const };
  const wake = { ...start, signal: { name: 'wake', args: ['x'] } };
  const first = await insertHandOffs(db.em(), 'rules-queue', [start, wake]);
  expect(first.map((h) => [h.key, h.version])).toEqual([[id, 1], [`${id}#wake`, 1]]);
  const [again] = await insertHandOffs(db.em(), 'rules-queue', [{ ...start, args: [2] }], { dueNow: true });
  expect([again!.key, again!.version]).toEqual([id, 2]);
  const rows = await sql(
    `select key, args, signal, signal_args, next_attempt_at <= now() as due from workflow_start where key like $1 order by key`,
    [`${id}%`],
  );
  expect(rows).toEqual([
    { key: id, args: [2], signal: null, signal_args: null, due: true },
    { key: `${id}#wake`, args: [1], signal: 'wake', signal_args: ['x'], due: false },
  ]);
  await sql('delete from workflow_start where key like $1', [`${id}%`]);
});

test("a TEV's default description and its beneficiary as the sender's statement shows it", async () => {
  const [row] = await sql(
    `select tev_description(null, 'João') as default, tev_description('Aluguel', 'João') as given,
            tev_beneficiary('João', '0001', '123', '12345678901') as beneficiary`,
  );
  expect(row).toEqual({
    default: 'Transferência para João',
    given: 'Aluguel',
    beneficiary: { ispb: '00000000', name: 'João', branch: '0001', account: '123', document: '12345678901', accountType: 'CACC', branchDigit: null, accountModel: 'INTERNAL' },
  });
});

describe("platform_ispb: the platform's own ISPB in SQL", () => {
  test('is the PLATFORM_ISPB TypeScript uses, and the one a TEV beneficiary carries', async () => {
    const [row] = await sql<{ ispb: string; beneficiary: string }>(
      "select platform_ispb() as ispb, tev_beneficiary('Ana', '0001', '123', '11144477735')->>'ispb' as beneficiary",
    );
    expect(row).toEqual({ ispb: PLATFORM_ISPB, beneficiary: PLATFORM_ISPB });
  });
});

describe('limit_periods: the day, the night and the month of a moment, in America/Sao_Paulo', () => {
  test.each([
    ['2030-03-12T05:59:59-03:00', 20, 'NIGHT', '2030-03-11', '2030-03-01'],
    ['2030-03-12T06:00:00-03:00', 20, 'DAY', '2030-03-12', '2030-03-01'],
    ['2030-03-12T19:59:59-03:00', 20, 'DAY', '2030-03-12', '2030-03-01'],
    ['2030-03-12T20:00:00-03:00', 20, 'NIGHT', '2030-03-12', '2030-03-01'],
    ['2030-03-12T21:59:59-03:00', 22, 'DAY', '2030-03-12', '2030-03-01'],
    ['2030-03-12T22:00:00-03:00', 22, 'NIGHT', '2030-03-12', '2030-03-01'],
    // The night of March 31st runs into April: its date stays, its month turns at midnight.
    ['2030-04-01T00:30:00-03:00', 20, 'NIGHT', '2030-03-31', '2030-04-01'],
    // Written in UTC: 02:59:59Z is 23:59:59 in São Paulo.
    ['2030-04-01T02:59:59Z', 20, 'NIGHT', '2030-03-31', '2030-03-01'],
  ])('%s, night from %i:00: %s of %s, month %s', async (at, nightStart, period, periodOf, monthOf) => {
    const [row] = await sql('select period, period_of::text, month_of::text from limit_periods($1::timestamptz, $2::smallint)', [at, nightStart]);
    expect(row).toEqual({ period, period_of: periodOf, month_of: monthOf });
  });
});

describe('limit_refusal: which limit a debit breaks, as LIMIT_EXCEEDED names it', () => {
  const refusal = async (amount: number, nightExempt: boolean, period: 'DAY' | 'NIGHT', periodUsed: number, monthUsed: number) =>
    (await sql('select limit_refusal($1, $2, $3, 5000, $4, $5, $6, 20000, $7) as refusal', ['PIX', amount, nightExempt, period, period === 'DAY' ? 8000 : 1000, periodUsed, monthUsed]))[0].refusal;

  test('per transaction first, then the current period, then the month; what remains never below zero', async () => {
    expect(await refusal(5001, false, 'DAY', 0, 0)).toEqual({ channel: 'PIX', period: 'TRANSACTION', limitCents: '5000', remainingCents: '5000' });
    expect(await refusal(5000, false, 'DAY', 4000, 19000)).toEqual({ channel: 'PIX', period: 'DAY', limitCents: '8000', remainingCents: '4000' });
    expect(await refusal(1, false, 'NIGHT', 1200, 0)).toEqual({ channel: 'PIX', period: 'NIGHT', limitCents: '1000', remainingCents: '0' });
    expect(await refusal(2000, false, 'DAY', 0, 19000)).toEqual({ channel: 'PIX', period: 'MONTH', limitCents: '20000', remainingCents: '1000' });
    expect(await refusal(1000, false, 'NIGHT', 0, 19000)).toBeNull();
  });

  test('a payment exempt from the night limit is held to the others at night, and to all of them by day', async () => {
    expect(await refusal(4000, true, 'NIGHT', 1000, 0)).toBeNull();
    expect(await refusal(4000, true, 'NIGHT', 1000, 17000)).toMatchObject({ period: 'MONTH' });
    expect(await refusal(4000, true, 'DAY', 5000, 0)).toMatchObject({ period: 'DAY' });
  });
});
