/**
 * Statement latency on a large account, against a running platform (`npm start`).
 *
 *   node bench/statement.ts [--rows 1000000] [--samples 500]
 *
 * 1. An account with `rows` statement transactions: a holder made through HTTP registration and sandbox KYC, then
 *    `rows` 1-cent incoming Pix inserted in bulk (generate_series) as balanced double entry: a credit movement and
 *    entry on the holder account, the matching debit movement and entry on the tenant's SETTLEMENT account, running
 *    balances, created_at spread over the last 90 days. The tenant is named after the row count, so a later run
 *    with the same --rows reuses it instead of inserting again.
 * 2. GET /accounts/:accountId/transactions with a holder JWT, one request at a time: first pages of random 7-day
 *    and 90-day ranges, walks of 50 pages following nextCursor, and pages at a random depth of the 90 days (these
 *    need a cursor the script builds, which a signing endpoint refuses: then they are measured on SQL only).
 * 3. The same pages as SQL alone (keyset query on movement + the page's ledger entries), and EXPLAIN ANALYZE of a
 *    first page and of the deepest page, to show movement_statement_idx serves them and what depth costs.
 * 4. The statement export, over HTTP, of the whole 90 days (every row): CSV and OFX, streamed, as rows/s, with the api
 *    process's resident memory (RSS) sampled every 50 ms during each, against the targets (CSV ≥ 50,000 rows/s, RSS
 *    growing < 100 MB).
 * 5. The balance at a moment (GET /accounts/:accountId/balance?at=) at `samples` random instants of the 90 days, one
 *    request at a time, p99 against the target (< 10 ms); 20 of them checked against the sum of the entries.
 * Exit 1 when a page is malformed, the index is not used, an export is short, or a balance is not the entries' sum.
 */
import os from 'node:os';
import { parseArgs } from 'node:util';
import type pg from 'pg';
import { readFileSync } from 'node:fs';
import { closeHttp, request } from './lib/http.ts';
import { processes } from './lib/proc.ts';
import { admin, assertPlatformUp, authenticate, holderUrl, onboardHolder, openPool, say, waitForApprovedAccounts } from './lib/platform.ts';
import { Latencies, seconds, since } from './lib/stats.ts';

const { values: args } = parseArgs({ options: { rows: { type: 'string', default: '1000000' }, samples: { type: 'string', default: '500' } } });
const ROWS = Number(args.rows);
const SAMPLES = Number(args.samples);
const PAGE_SIZE = 20;
const WALK_PAGES = 50;
const SPAN_DAYS = 90;
const CHUNK = 100_000;
const DAY_MS = 86_400_000;

/** The mark a later run looks for: one bench tenant per row count. */
const tenantName = `bench-statement rows=${ROWS}`;

interface BenchAccount {
  tenantId: string;
  document: string;
  accountId: string;
}

// ------------------------------------------------------------------------------------------------ the account

/** The account a previous run filled with exactly `ROWS` transactions, if there is one. */
async function findPrevious(pool: pg.Pool): Promise<BenchAccount | null> {
  const { rows } = await pool.query<BenchAccount & { movements: number }>(
    `select t.id as "tenantId", h.document, a.id as "accountId",
            (select count(*) from movement m where m.account_id = a.id)::int as movements
       from tenant t join holder h on h.tenant_id = t.id join account a on a.holder_id = h.id
      where t.name = $1 and a.status = 'APPROVED'
      order by t.created_at desc`,
    [tenantName],
  );
  const complete = rows.find((r) => r.movements === ROWS);
  return complete ? { tenantId: complete.tenantId, document: complete.document, accountId: complete.accountId } : null;
}

/** A new tenant (operator CLI) and one holder through HTTP registration and sandbox KYC. */
async function createHolder(pool: pg.Pool): Promise<BenchAccount> {
  const { tenantId } = await admin('tenant:create', '--name', tenantName);
  const holder = await onboardHolder(tenantId, 'Titular Extrato Bench');
  const accounts = await waitForApprovedAccounts(pool, tenantId, 1);
  return { tenantId, document: holder.document, accountId: accounts.get(holder.holderId)!.id };
}

/**
 * The tenant's SETTLEMENT account, where the filled movements' other side is posted; created here as a tenant's own
 * accounts are when missing (the insert does nothing when the tenant has it).
 */
async function settlementAccount(client: pg.PoolClient, tenantId: string): Promise<string> {
  await client.query(
    `insert into account (id, tenant_id, holder_id, kind, bank, agency, number, pix_account_id, core_account_id, status)
     values (gen_random_uuid(), $1, null, 'SETTLEMENT', '000', '0000', nextval('account_number_seq')::text,
             'p' || md5(random()::text), 'c' || md5(random()::text), 'APPROVED')
     on conflict (tenant_id) where kind = 'SETTLEMENT' do nothing`,
    [tenantId],
  );
  const { rows } = await client.query<{ id: string }>(`select id from account where tenant_id = $1 and kind = 'SETTLEMENT'`, [tenantId]);
  return rows[0]!.id;
}

/**
 * Row i (1-based) of the series: its timestamp (evenly spread, oldest first, microsecond precision) and its Pix
 * end-to-end id (E + payer ISPB + yyyyMMddHHmm + 11-digit sequence = 32 characters), which is also the operation id.
 */
const SERIES = `
  select i,
         to_timestamp(($3::float8 + (i - 1) * $4::float8) / 1000) as at,
         'E99999999' || to_char(to_timestamp(($3::float8 + (i - 1) * $4::float8) / 1000) at time zone 'UTC', 'YYYYMMDDHH24MI') || lpad(i::text, 11, '0') as e2e
    from generate_series($1::int, $2::int) as i`;

/**
 * Movement (m) and entry (e) ids: a letter and 24 hex digits of md5(account, side, i), deterministic and of cuid2
 * shape (a letter, then at most 31 lowercase alphanumerics): the statement cursor only accepts cuid-looking ids.
 */
const rowId = (prefix: 'm' | 'e', side: string) => `'${prefix}' || left(md5($5::text || ':${side}:' || s.i), 24)`;

/** One side of each incoming Pix: the holder's credit (PIX_IN, with payer metadata) or the settlement account's debit. */
function insertMovements(side: 'holder' | 'settlement'): string {
  const holder = side === 'holder';
  return `
    insert into movement (id, statement_id, tenant_id, account_id, operation_id, source, channel, direction, status, payout_status,
                          status_external, amount_cents, fee_cents, balance_after_cents, description, external_ref, end_to_end_id,
                          reverses_movement_id, metadata, created_at)
    select ${rowId('m', side)}, gen_random_uuid(), $6::uuid, $5::uuid, s.e2e, '${holder ? 'PIX_IN' : 'SETTLEMENT'}', 'PIX',
           '${holder ? 'CREDIT' : 'DEBIT'}', 'DONE', null, 'SUCCESS', 1, 0, $7::bigint ${holder ? '+' : '-'} s.i,
           ${holder ? `'Pix recebido de Pagador Bench'` : `'Pix in ' || s.e2e`}, null, s.e2e, null,
           ${holder ? METADATA : `'{}'::jsonb`}, s.at
      from (${SERIES}) s`;
}

/** What receivePix stores on the credit: payer and beneficiary, so pages are as heavy as real ones. */
const METADATA = `jsonb_build_object(
  'date', to_char(s.at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), 'endToEndId', s.e2e,
  'paymentDate', to_char(s.at at time zone 'America/Sao_Paulo', 'YYYY-MM-DD HH24:MI:SS') || '-03:00',
  'payer', jsonb_build_object('ispb', '99999999', 'name', 'Pagador Bench', 'branch', '0001', 'account', '9999999',
                              'document', '12345678909', 'institution', 'Banco Sandbox S.A.'),
  'beneficiary', jsonb_build_object('branch', $8::text, 'account', $9::text))`;

function insertEntries(side: 'holder' | 'settlement'): string {
  const sign = side === 'holder' ? '' : '-';
  return `
    insert into ledger_entry (id, movement_id, account_id, line, kind, amount_cents, balance_after_cents, created_at)
    select ${rowId('e', side)}, ${rowId('m', side)}, $5::uuid, 1, 'PRIMARY',
           ${sign}1, $6::bigint ${sign === '' ? '+' : '-'} s.i, s.at
      from (${SERIES}) s`;
}

/**
 * Inserts the ROWS incoming Pix in one transaction (chunks only to show progress): a failed run leaves nothing
 * behind, and findPrevious only ever reuses a complete account. Balances start from the accounts' current ones.
 */
async function fill(pool: pg.Pool, target: BenchAccount): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query('begin');
    const settlementId = await settlementAccount(client, target.tenantId);
    const { rows } = await client.query<{ id: string; balance: string; agency: string; number: string }>(
      `select id, balance_cents::text as balance, agency, number from account where id in ($1, $2) for update`,
      [target.accountId, settlementId],
    );
    const holder = rows.find((r) => r.id === target.accountId)!;
    const settlement = rows.find((r) => r.id === settlementId)!;
    // Oldest at now - 90 days, newest a minute ago: every day of the range has transactions.
    const startMs = Date.now() - SPAN_DAYS * DAY_MS;
    const stepMs = (SPAN_DAYS * DAY_MS - 60_000) / ROWS;
    const started = performance.now();
    for (let from = 1; from <= ROWS; from += CHUNK) {
      const to = Math.min(ROWS, from + CHUNK - 1);
      const series = [from, to, startMs, stepMs];
      await client.query(insertMovements('holder'), [...series, target.accountId, target.tenantId, holder.balance, holder.agency, holder.number]);
      await client.query(insertMovements('settlement'), [...series, settlementId, target.tenantId, settlement.balance]);
      await client.query(insertEntries('holder'), [...series, target.accountId, holder.balance]);
      await client.query(insertEntries('settlement'), [...series, settlementId, settlement.balance]);
      say(`  ${to.toLocaleString('en')} / ${ROWS.toLocaleString('en')} rows (${seconds(since(started))})`);
    }
    await client.query(`update account set balance_cents = balance_cents + $2 where id = $1`, [target.accountId, ROWS]);
    await client.query(`update account set balance_cents = balance_cents - $2 where id = $1`, [settlementId, ROWS]);
    await client.query('commit');
  } catch (err) {
    await client.query('rollback');
    throw err;
  } finally {
    client.release();
  }
  // Fresh statistics, as autovacuum would gather after a load this size: the planner's choice is what is measured.
  await pool.query('analyze movement');
  await pool.query('analyze ledger_entry');
}

async function prepareAccount(pool: pg.Pool): Promise<BenchAccount> {
  const start = performance.now();
  const previous = await findPrevious(pool);
  if (previous) {
    say(`reusing tenant "${tenantName}" (${previous.tenantId}): ${ROWS.toLocaleString('en')} transactions already there`);
    return previous;
  }
  say(`creating tenant "${tenantName}" and inserting ${ROWS.toLocaleString('en')} incoming Pix (x2 movements and entries)`);
  const account = await createHolder(pool);
  await fill(pool, account);
  say(`  account ready in ${seconds(since(start))}`);
  return account;
}

// ------------------------------------------------------------------------------------------------ the sampling plan

const isoDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);

interface Range {
  startDate: string;
  endDate: string;
}

/** The whole 90 days of data. */
const fullRange = (): Range => ({ startDate: isoDay(Date.now() - (SPAN_DAYS - 1) * DAY_MS), endDate: isoDay(Date.now()) });

/**
 * A random range of `days` days with data in it: 7-day ranges anywhere in the 90 days, 90-day ranges ending in the
 * last 30 days (so they hold 60 to 90 days of transactions).
 */
function randomRange(days: number): Range {
  const latestEndDaysAgo = days >= SPAN_DAYS ? 30 : SPAN_DAYS - days;
  const endMs = Date.now() - Math.floor(Math.random() * (latestEndDaysAgo + 1)) * DAY_MS;
  return { startDate: isoDay(endMs - (days - 1) * DAY_MS), endDate: isoDay(endMs) };
}

/** A position in the statement: the movement's exact created_at (microseconds) and id, what a cursor carries. */
interface Position {
  at: string;
  id: string;
}

/**
 * How the samples split: 40% first pages (7-day and 90-day ranges alternating, plus the first page of each walk),
 * 40% pages of walks that follow nextCursor for 50 pages, 20% "random-depth" pages: one page after a position
 * drawn anywhere in the 90 days, as a client that has paged far into a long range asks for it. The walks only go
 * 1,000 rows deep; the random-depth pages show whether the cost of a page depends on how deep it is.
 */
function plan() {
  const walks = Math.max(1, Math.round((SAMPLES * 0.4) / WALK_PAGES));
  const deep = Math.max(1, Math.round(SAMPLES * 0.2));
  return { walks, deep, firstPages: Math.max(1, SAMPLES - walks * WALK_PAGES - deep - walks) };
}

/** Latencies of the three kinds of page. */
interface Buckets {
  first: Latencies;
  walk: Latencies;
  deep: Latencies;
}

/** One page, timed into `into`; returns the next cursor (null at the end, or on an error). */
type PageFn<C> = (range: Range, cursor: C | null, into: Latencies) => Promise<C | null>;

/** Runs the plan with one sampler (HTTP or SQL), sequentially: latency without load. */
async function runPlan<C>(page: PageFn<C>, deepCursors: C[]): Promise<Buckets> {
  const b: Buckets = { first: new Latencies(), walk: new Latencies(), deep: new Latencies() };
  const { walks, firstPages } = plan();
  for (let i = 0; i < firstPages; i++) await page(randomRange(i % 2 === 0 ? 7 : SPAN_DAYS), null, b.first);
  for (let w = 0; w < walks; w++) {
    const range = randomRange(SPAN_DAYS);
    let next = await page(range, null, b.first);
    for (let n = 0; n < WALK_PAGES && next !== null; n++) next = await page(range, next, b.walk);
  }
  for (const cursor of deepCursors) await page(fullRange(), cursor, b.deep);
  return b;
}

/** Positions at random instants of the 90 days (the movement at or just before each), for the random-depth pages. */
async function randomPositions(pool: pg.Pool, accountId: string, count: number): Promise<Position[]> {
  const positions: Position[] = [];
  for (let i = 0; i < count; i++) {
    const at = new Date(Date.now() - Math.random() * (SPAN_DAYS - 1) * DAY_MS).toISOString();
    const { rows } = await pool.query<Position>(
      `select to_char(created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as at, id
         from movement where account_id = $1 and created_at <= $2 order by created_at desc, id desc limit 1`,
      [accountId, at],
    );
    if (rows[0]) positions.push(rows[0]);
  }
  return positions;
}

function printBuckets(title: string, b: Buckets) {
  say(title);
  say(`  ${b.first.line('first pages')}`);
  say(`  ${b.walk.line('cursor pages (50-page walks)')}`);
  say(`  ${b.deep.line('cursor pages (random depth)')}`);
}

// ------------------------------------------------------------------------------------------------ over HTTP

interface Page {
  transactions: { createdAt: string; ledgerEntries: unknown[] }[];
  pagination: { nextCursor: string | null; hasMore: boolean };
}

function pageProblem(p: Page): string | null {
  if (!Array.isArray(p?.transactions)) return 'no transactions[]';
  if (p.transactions.length > PAGE_SIZE) return 'page larger than limit';
  const times = p.transactions.map((t) => t.createdAt);
  if (times.some((t, i) => i > 0 && t > times[i - 1]!)) return 'not newest first';
  if (p.transactions.some((t) => !Array.isArray(t.ledgerEntries) || t.ledgerEntries.length === 0)) return 'transaction without ledger entries';
  if (p.pagination.hasMore !== (p.pagination.nextCursor !== null)) return 'hasMore disagrees with nextCursor';
  return null;
}

/** GET one page; anything but a well-formed, newest-first page is counted in `errors`. */
function httpPager(target: BenchAccount, token: string, errors: Map<string, number>): PageFn<string> {
  return async (range, cursor, into) => {
    const query = new URLSearchParams({ ...range, limit: String(PAGE_SIZE), ...(cursor ? { cursor } : {}) });
    const start = performance.now();
    const res = await request<Page & { code?: string; message?: string }>('GET', `${holderUrl}/accounts/${target.accountId}/transactions?${query}`, {
      headers: { 'x-tenant-id': target.tenantId, authorization: `Bearer ${token}` },
    });
    into.add(since(start));
    const problem = res.status !== 200 ? `HTTP ${res.status} ${res.body?.code ?? ''} ${String(res.body?.message ?? '').slice(0, 80)}` : pageProblem(res.body);
    if (problem) errors.set(problem, (errors.get(problem) ?? 0) + 1);
    return problem ? null : res.body.pagination.nextCursor;
  };
}

/**
 * A cursor for a position, encoded as the first version of the endpoint did (base64url of {"at","id"}). Only the
 * random-depth pages need one (a real client gets there by following nextCursor for thousands of pages); if the
 * endpoint refuses it (signed cursors) the random-depth pages are measured on SQL only.
 */
const cursorFor = (p: Position) => Buffer.from(JSON.stringify({ at: p.at, id: p.id })).toString('base64url');

async function acceptsBuiltCursors(target: BenchAccount, token: string, p: Position | undefined): Promise<boolean> {
  if (!p) return false;
  const query = new URLSearchParams({ ...fullRange(), cursor: cursorFor(p) });
  const res = await request('GET', `${holderUrl}/accounts/${target.accountId}/transactions?${query}`, {
    headers: { 'x-tenant-id': target.tenantId, authorization: `Bearer ${token}` },
  });
  return res.status === 200;
}

/** Whether the endpoint is deployed yet (it was being written in src/statements/ when this script was). */
async function endpointAvailable(target: BenchAccount, token: string): Promise<boolean> {
  const today = isoDay(Date.now());
  const res = await request('GET', `${holderUrl}/accounts/${target.accountId}/transactions?startDate=${today}&endDate=${today}`, {
    headers: { 'x-tenant-id': target.tenantId, authorization: `Bearer ${token}` },
  });
  // The apps answer an unknown route with 404 "No route for GET …".
  return !(res.status === 404 && /No route/.test(String(res.body?.message)));
}

async function measureHttp(target: BenchAccount, positions: Position[]): Promise<{ buckets: Buckets; errors: Map<string, number> } | null> {
  const { token } = await authenticate(target.tenantId, target.document);
  if (!(await endpointAvailable(target, token))) {
    say('GET /accounts/:accountId/transactions is not deployed: HTTP part skipped');
    return null;
  }
  const builtCursors = await acceptsBuiltCursors(target, token, positions[0]);
  if (!builtCursors) say('  (the endpoint refuses cursors it did not issue: random-depth pages measured on SQL only)');
  const errors = new Map<string, number>();
  const buckets = await runPlan(httpPager(target, token, errors), builtCursors ? positions.map(cursorFor) : []);
  return { buckets, errors };
}

// ------------------------------------------------------------------------------------------------ SQL alone

/** The statement's page query (src/statements/service.ts): keyset on (created_at, id) with the cursor bounding created_at, newest first, limit + 1. */
const PAGE_SQL = (withCursor: boolean) => `
  select m.id, m.statement_id, m.source, m.channel, m.direction, m.status, m.payout_status, m.status_external,
         m.amount_cents::text as amount_cents, m.fee_cents::text as fee_cents, m.balance_after_cents::text as balance_after_cents,
         m.description, m.external_ref, m.end_to_end_id, m.reverses_movement_id, m.metadata,
         to_char(m.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as created_at,
         to_char(m.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as position
    from movement m
   where m.account_id = $1
     and m.created_at >= ($2::date::timestamp at time zone 'UTC')
     and m.created_at < (($3::date + 1)::timestamp at time zone 'UTC')
     ${withCursor ? 'and m.created_at <= $5::timestamptz and (m.created_at < $5::timestamptz or m.id < $6)' : ''}
   order by m.created_at desc, m.id desc
   limit $4`;

/** The page's ledger entries in one query (src/statements/movements.ts). */
const ENTRIES_SQL = `
  select id, movement_id, account_id, kind, amount_cents::text as amount_cents, balance_after_cents::text as balance_after_cents,
         to_char(created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as created_at
    from ledger_entry where movement_id = any($1) order by movement_id, line`;

const pageParams = (accountId: string, range: Range, cursor: Position | null): unknown[] => [
  accountId, range.startDate, range.endDate, PAGE_SIZE + 1, ...(cursor ? [cursor.at, cursor.id] : []),
];

/** The two queries of one page on one connection, timed together. */
function sqlPager(client: pg.PoolClient, accountId: string): PageFn<Position> {
  return async (range, cursor, into) => {
    const start = performance.now();
    const { rows } = await client.query<{ id: string; position: string }>(PAGE_SQL(cursor !== null), pageParams(accountId, range, cursor));
    const page = rows.slice(0, PAGE_SIZE);
    await client.query(ENTRIES_SQL, [page.map((m) => m.id)]);
    into.add(since(start));
    const last = page.at(-1);
    return rows.length > PAGE_SIZE && last ? { at: last.position, id: last.id } : null;
  };
}

async function measureSql(pool: pg.Pool, target: BenchAccount, positions: Position[]): Promise<Buckets> {
  const client = await pool.connect();
  try {
    return await runPlan(sqlPager(client, target.accountId), positions);
  } finally {
    client.release();
  }
}

/** EXPLAIN (ANALYZE, BUFFERS) of one page query: the plan must walk movement_statement_idx, not sort the account. */
async function explain(pool: pg.Pool, target: BenchAccount, cursor: Position | null): Promise<boolean> {
  const range = fullRange();
  const { rows } = await pool.query<{ 'QUERY PLAN': string }>(`explain (analyze, buffers) ${PAGE_SQL(cursor !== null)}`, pageParams(target.accountId, range, cursor));
  const lines = rows.map((r) => r['QUERY PLAN']);
  say(`
EXPLAIN ANALYZE, ${cursor ? `page after ${cursor.at}` : 'first page'} of ${range.startDate}..${range.endDate}:`);
  for (const line of lines) say(`  ${line}`);
  const used = lines.some((l) => l.includes('movement_statement_idx'));
  say(`movement_statement_idx used: ${used ? 'yes' : 'NO'}`);
  return used;
}

/** A position 25 rows before the start of the 90-day range: the deepest page of that range. */
async function deepestPosition(pool: pg.Pool, accountId: string): Promise<Position> {
  const { rows } = await pool.query<Position>(
    `select to_char(created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as at, id
       from movement where account_id = $1 and created_at >= ($2::date::timestamp at time zone 'UTC')
      order by created_at, id offset 25 limit 1`,
    [accountId, fullRange().startDate],
  );
  return rows[0]!;
}

// ------------------------------------------------------------------------------------------------ exports and balances

/** The api process serving holderUrl: the one `src/main.ts` of this machine (null when there is not exactly one). */
function apiPid(): number | null {
  const apis = processes().filter((p) => /(^|\s|\/)src\/main\.ts(\s|$)/.test(p.command));
  return apis.length === 1 ? apis[0]!.pid : null;
}

/** Resident memory of a process in MB (VmRSS), NaN once it is gone. */
function rssMb(pid: number): number {
  try {
    const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return kb ? Number(kb) / 1024 : NaN;
  } catch {
    return NaN;
  }
}

interface ExportFigures {
  rows: number;
  ms: number;
  megabytes: number;
  rssBefore: number;
  rssPeak: number;
}

/** Downloads one export of the whole range, counting its rows as they arrive (never holding the file). */
async function measureExport(target: BenchAccount, token: string, accept: 'text/csv' | 'application/x-ofx'): Promise<ExportFigures> {
  const pid = apiPid();
  const rssBefore = pid ? rssMb(pid) : NaN;
  let rssPeak = rssBefore;
  const sampler = setInterval(() => {
    if (pid) rssPeak = Math.max(rssPeak, rssMb(pid));
  }, 50);
  // A day more than the 90 days on each side: every row of the account, whatever the hour of the fill.
  const startDate = isoDay(Date.now() - (SPAN_DAYS + 1) * DAY_MS);
  const endDate = isoDay(Date.now() + DAY_MS);
  const start = performance.now();
  const res = await fetch(`${holderUrl}/accounts/${target.accountId}/statement?startDate=${startDate}&endDate=${endDate}`, {
    headers: { 'x-tenant-id': target.tenantId, authorization: `Bearer ${token}`, accept },
  });
  if (res.status !== 200 || !res.body) throw new Error(`export ${accept}: HTTP ${res.status} ${await res.text()}`);
  // A CSV row is a line (less the header); an OFX transaction opens with <STMTTRN>, which a chunk may cut: the tail
  // of each chunk is carried into the next.
  const marker = accept === 'text/csv' ? '\n' : '<STMTTRN>';
  let count = 0;
  let bytes = 0;
  let carry = '';
  const decoder = new TextDecoder();
  for await (const chunk of res.body) {
    bytes += chunk.byteLength;
    const text = carry + decoder.decode(chunk, { stream: true });
    for (let i = text.indexOf(marker); i !== -1; i = text.indexOf(marker, i + marker.length)) count++;
    carry = text.slice(Math.max(0, text.length - marker.length + 1));
    if (carry.includes(marker)) carry = '';
  }
  const ms = since(start);
  clearInterval(sampler);
  if (pid) rssPeak = Math.max(rssPeak, rssMb(pid));
  return { rows: accept === 'text/csv' ? count - 1 : count, ms, megabytes: bytes / 1024 / 1024, rssBefore, rssPeak };
}

function printExport(label: string, f: ExportFigures, targetRate: number | null): boolean {
  const rate = f.rows / (f.ms / 1000);
  const growth = f.rssPeak - f.rssBefore;
  say(
    `  ${label.padEnd(5)} ${f.rows.toLocaleString('en')} rows, ${f.megabytes.toFixed(1)} MB in ${seconds(f.ms)}: ${Math.round(rate).toLocaleString('en')} rows/s` +
      `${targetRate ? ` (target ≥ ${targetRate.toLocaleString('en')})` : ''}; api RSS ${f.rssBefore.toFixed(0)} → peak ${f.rssPeak.toFixed(0)} MB (+${growth.toFixed(0)} MB, target < 100)`,
  );
  return f.rows === ROWS && (targetRate === null || rate >= targetRate) && !(growth >= 100);
}

/** Balances at random instants over HTTP; the first 20 compared with the entries' sum up to that instant. */
async function measureBalances(pool: pg.Pool, target: BenchAccount, token: string): Promise<{ latencies: Latencies; wrong: number }> {
  const latencies = new Latencies();
  let wrong = 0;
  for (let i = 0; i < SAMPLES; i++) {
    const at = new Date(Date.now() - Math.random() * SPAN_DAYS * DAY_MS).toISOString();
    const start = performance.now();
    const res = await request<{ balance: number }>('GET', `${holderUrl}/accounts/${target.accountId}/balance?at=${encodeURIComponent(at)}`, {
      headers: { 'x-tenant-id': target.tenantId, authorization: `Bearer ${token}` },
    });
    latencies.add(since(start));
    if (res.status !== 200) wrong++;
    else if (i < 20) {
      const { rows } = await pool.query<{ cents: string }>(
        `select coalesce(sum(amount_cents), 0)::text as cents from ledger_entry where account_id = $1 and date_trunc('milliseconds', created_at) <= $2::timestamptz`,
        [target.accountId, at],
      );
      if (Math.round(res.body.balance * 100) !== Number(rows[0]!.cents)) wrong++;
    }
  }
  return { latencies, wrong };
}

async function measureExportsAndBalances(pool: pg.Pool, target: BenchAccount): Promise<boolean> {
  const { token } = await authenticate(target.tenantId, target.document);
  const pid = apiPid();
  say(`\nstatement export of every row (${SPAN_DAYS + 3} days) over HTTP, streamed (api pid ${pid ?? 'not found: RSS not sampled'}):`);
  const csvOk = printExport('CSV', await measureExport(target, token, 'text/csv'), 50_000);
  const ofxOk = printExport('OFX', await measureExport(target, token, 'application/x-ofx'), null);
  const { latencies, wrong } = await measureBalances(pool, target, token);
  say(`balance at a moment, ${SAMPLES} random instants, one request at a time (target p99 < 10 ms):`);
  say(`  ${latencies.line('GET …/balance?at=')}  not exact or failed: ${wrong}`);
  return csvOk && ofxOk && wrong === 0 && latencies.summary().p99 < 10;
}

// ------------------------------------------------------------------------------------------------------- main

async function main(): Promise<number> {
  say(`bench/statement.ts: ${ROWS.toLocaleString('en')} rows, ${SAMPLES} samples; ${os.cpus().length} CPUs; load average ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  await assertPlatformUp();
  const pool = openPool();
  try {
    const target = await prepareAccount(pool);
    const { firstPages, walks, deep } = plan();
    say(
      `\nsampling, one request at a time, limit ${PAGE_SIZE}: ${firstPages + walks} first pages (7-day and ${SPAN_DAYS}-day ranges), ` +
        `${walks} walks of ${WALK_PAGES} cursor pages, ${deep} cursor pages at random depth in ${SPAN_DAYS} days`,
    );
    const positions = await randomPositions(pool, target.accountId, deep);

    const http = await measureHttp(target, positions);
    if (http) {
      printBuckets('HTTP GET /accounts/:accountId/transactions:', http.buckets);
      say(`  errors: ${http.errors.size ? JSON.stringify(Object.fromEntries(http.errors)) : 'none'}`);
    }
    printBuckets('SQL alone (page query + its ledger entries, one connection):', await measureSql(pool, target, positions));

    // A first page, then the deepest page of the range: the second shows what a deep cursor costs.
    const firstUsesIndex = await explain(pool, target, null);
    const deepUsesIndex = await explain(pool, target, await deepestPosition(pool, target.accountId));
    const exportsOk = await measureExportsAndBalances(pool, target);
    return firstUsesIndex && deepUsesIndex && exportsOk && (!http || http.errors.size === 0) ? 0 : 1;
  } finally {
    await pool.end();
    closeHttp();
  }
}

process.exitCode = await main();
