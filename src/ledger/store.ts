/**
 * The ledger's SQL in TypeScript: the calls of the posting functions (src/ledger/sql/, where every posting locks its
 * accounts, checks and writes), the reads of `movement` and `ledger_entry` that statements and payouts make, and the
 * marks of a settled payout's movements.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { queryPrepared } from '../persistence/prepared.ts';
import { isoUtc } from '../shared/pagination.ts';
import type { EntryKind, MovementPayoutStatus, MovementSource } from './types.ts';

/** A movement as the statement and the payout read it (bigints as text). */
export interface MovementRow {
  id: string;
  statement_id: string;
  /** The operation both sides share: a TEV's tevId, a Pix payout's payoutId. */
  operation_id: string;
  source: MovementSource;
  channel: 'TEF' | 'PIX';
  direction: 'DEBIT' | 'CREDIT';
  status: 'DONE' | 'PENDING' | 'FAILED';
  payout_status: MovementPayoutStatus | null;
  status_external: string;
  amount_cents: string;
  fee_cents: string;
  balance_after_cents: string;
  description: string;
  external_ref: string | null;
  end_to_end_id: string | null;
  reverses_movement_id: string | null;
  metadata: Record<string, unknown>;
  created_at: string;
  /** `created_at` with microseconds: the statement cursor. */
  position: string;
}

export const MOVEMENT_COLUMNS = `m.id, m.statement_id, m.operation_id, m.source, m.channel, m.direction, m.status, m.payout_status, m.status_external,
  m.amount_cents::text as amount_cents, m.fee_cents::text as fee_cents, m.balance_after_cents::text as balance_after_cents,
  m.description, m.external_ref, m.end_to_end_id, m.reverses_movement_id, m.metadata,
  ${isoUtc('m.created_at')} as created_at, ${isoUtc('m.created_at', 'US')} as position`;

export interface EntryRow {
  id: string;
  movement_id: string;
  /** The account's internal id (`coreAccountId`, a cuid), as a payout shows its entries. */
  core_account_id: string;
  kind: EntryKind;
  amount_cents: string;
  balance_after_cents: string;
  created_at: string;
}

/** The ledger entries of many movements in one query, each movement's in line order. */
export async function entriesByMovement(em: EntityManager, movementIds: string[]): Promise<Map<string, EntryRow[]>> {
  const byMovement = new Map(movementIds.map((id) => [id, [] as EntryRow[]]));
  if (movementIds.length === 0) return byMovement;
  const rows = await em.execute<EntryRow[]>(
    `select e.id, e.movement_id, a.core_account_id, e.kind, e.amount_cents::text as amount_cents,
            e.balance_after_cents::text as balance_after_cents, ${isoUtc('e.created_at')} as created_at
       from ledger_entry e join account a on a.id = e.account_id
      where e.movement_id in (?)
      order by e.movement_id, e.line`,
    [movementIds],
  );
  for (const row of rows) byMovement.get(row.movement_id)!.push(row);
  return byMovement;
}

/** One movement, or null. */
export async function findMovement(em: EntityManager, movementId: string): Promise<MovementRow | null> {
  const [m] = await em.execute<MovementRow[]>(`select ${MOVEMENT_COLUMNS} from movement m where m.id = ?`, [movementId]);
  return m ?? null;
}

/** A movement of the account by its statement id (the statement transaction's `id`), or null. */
export async function findAccountMovement(em: EntityManager, accountId: string, statementId: string): Promise<MovementRow | null> {
  const [m] = await em.execute<MovementRow[]>(`select ${MOVEMENT_COLUMNS} from movement m where m.statement_id = ? and m.account_id = ?`, [statementId, accountId]);
  return m ?? null;
}

/** The movements of the same account that returned money of `movementId` (failure, cancellation, refund), oldest first. */
export async function findReturnsOf(em: EntityManager, movementId: string): Promise<string[]> {
  const rows = await em.execute<{ id: string }[]>(
    'select id from movement where reverses_movement_id = ? and account_id = (select account_id from movement where id = ?) order by created_at',
    [movementId, movementId],
  );
  return rows.map((r) => r.id);
}

/**
 * One page of an account's movements in a date range, newest first, after `after` when given; `limit` rows at most.
 * Keyset on (created_at, id) over `movement_statement_idx`.
 */
export async function movementsPage(
  em: EntityManager,
  accountId: string,
  range: { startDate: string; endDate: string },
  after: { at: string; id: string } | null,
  limit: number,
): Promise<MovementRow[]> {
  return em.execute<MovementRow[]>(
    `select ${MOVEMENT_COLUMNS}
       from movement m
      where m.account_id = ?
        and m.created_at >= (?::date::timestamp at time zone 'UTC')
        and m.created_at < ((?::date + 1)::timestamp at time zone 'UTC')
        ${after ? 'and m.created_at <= ?::timestamptz and (m.created_at < ?::timestamptz or m.id < ?)' : ''}
      order by m.created_at desc, m.id desc
      limit ?`,
    // The cursor as an upper bound on created_at (not only a row comparison) lets the index scan start at the
    // cursor instead of at the end of the range: a deep page costs what the first page costs.
    [accountId, range.startDate, range.endDate, ...(after ? [after.at, after.at, after.id] : []), limit],
  );
}

/** The last movement a balance at a moment includes: its statement id and the balance after it (cents, as text). */
export interface BalanceRow {
  statement_id: string;
  balance_after_cents: string;
}

/**
 * The account's last movement at `at` (ISO 8601), or its last movement of all when `at` is null; null when it has none
 * yet. Its `balance_after_cents` is the balance then: a posting takes its time after it locks the account
 * (post_movements), so the account's movements are applied in created_at order and the balance after the newest is the
 * sum of every entry up to it. One read of
 * `movement_statement_idx`, from the bound down. The bound is the instant as the statement shows times, to the
 * millisecond: a movement whose `createdAt` is `at` itself is included.
 */
export async function lastMovementAt(em: EntityManager, accountId: string, at: string | null): Promise<BalanceRow | null> {
  // A named prepared statement on the pool (one per form): planned once per connection, as the request path's postings.
  const pool = await em.getConnection().getNativeClient();
  const { rows } = await pool.query<BalanceRow>({
    name: at === null ? 'balance_now' : 'balance_at',
    text: `select m.statement_id, m.balance_after_cents::text as balance_after_cents
             from movement m
            where m.account_id = $1
              ${at === null ? '' : "and m.created_at < date_trunc('milliseconds', $2::timestamptz) + interval '1 millisecond'"}
            order by m.created_at desc, m.id desc
            limit 1`,
    values: at === null ? [accountId] : [accountId, at],
  });
  return rows[0] ?? null;
}

/** A movement as a statement export writes it: what an accountant's line needs, times in UTC and in Brasília. */
export interface ExportRow {
  id: string;
  statement_id: string;
  /** ISO 8601 UTC with microseconds: the keyset position. */
  position: string;
  created_at: string;
  /** Brasília wall clock, `YYYY-MM-DD HH:MM:SS`, and its offset from UTC in hours (-3). */
  local_time: string;
  local_offset: number;
  channel: 'TEF' | 'PIX';
  source: MovementSource;
  direction: 'DEBIT' | 'CREDIT';
  status: 'DONE' | 'PENDING' | 'FAILED';
  /** What the movement did to the balance, fee included (cents, signed): the sum of its entries. */
  net_cents: string;
  fee_cents: string;
  balance_after_cents: string;
  description: string;
  end_to_end_id: string | null;
  counterpart: string | null;
}

/**
 * One page of an account's movements in a date range (UTC days, inclusive, as the statement), oldest first, after
 * `after`: a statement export reads the range page by page, so it never holds more than a page. Keyset on
 * (created_at, id) over `movement_statement_idx`, read backwards. Runs on a pool connection as a named prepared
 * statement: an export runs it thousands of times. A movement's lines move the balance by ±amount (a credit, a debit
 * or a reversal) less the fee its side paid, so `net_cents` is its entries' sum without reading them.
 */
export async function exportPage(
  em: EntityManager,
  accountId: string,
  range: { startDate: string; endDate: string },
  after: { at: string; id: string } | null,
  limit: number,
): Promise<ExportRow[]> {
  const pool = await em.getConnection().getNativeClient();
  // Two statements, not one with an optional bound: a generic plan of `$4 is null or …` would not start the index scan
  // at the bound, and each page would read the range from its start.
  const { rows } = await pool.query<ExportRow>({
    name: after ? 'statement_export_next_page' : 'statement_export_first_page',
    text: `select m.id, m.statement_id, ${isoUtc('m.created_at', 'US')} as position, ${isoUtc('m.created_at')} as created_at,
                  to_char(m.created_at at time zone 'America/Sao_Paulo', 'YYYY-MM-DD HH24:MI:SS') as local_time,
                  extract(epoch from (m.created_at at time zone 'America/Sao_Paulo') - (m.created_at at time zone 'UTC'))::int / 3600 as local_offset,
                  m.channel, m.source, m.direction, m.status,
                  ((case m.direction when 'CREDIT' then m.amount_cents else -m.amount_cents end) - m.fee_cents)::text as net_cents,
                  m.fee_cents::text as fee_cents, m.balance_after_cents::text as balance_after_cents, m.description, m.end_to_end_id,
                  case m.direction when 'CREDIT' then m.metadata->'payer'->>'name' else m.metadata->'beneficiary'->>'name' end as counterpart
             from movement m
            where m.account_id = $1
              and m.created_at >= ($2::date::timestamp at time zone 'UTC')
              and m.created_at < (($3::date + 1)::timestamp at time zone 'UTC')
              ${after ? 'and m.created_at >= $5::timestamptz and (m.created_at > $5::timestamptz or m.id > $6)' : ''}
            order by m.created_at, m.id
            limit $4`,
    values: [accountId, range.startDate, range.endDate, limit, ...(after ? [after.at, after.id] : [])],
  });
  return rows;
}

/** Debits (PRIMARY and FEE) net of reversals since the start of the current month in America/Sao_Paulo, per account. */
export async function debitsThisMonth(em: EntityManager, accountIds: string[]): Promise<Map<string, bigint>> {
  if (accountIds.length === 0) return new Map();
  const rows = await em.execute<{ account_id: string; spent: string }[]>(
    `select account_id,
            coalesce(sum(-amount_cents) filter (where amount_cents < 0), 0)
              - coalesce(sum(amount_cents) filter (where kind = 'REVERSAL' and amount_cents > 0), 0) as spent
       from ledger_entry
      where account_id in (?)
        and created_at >= (date_trunc('month', now() at time zone 'America/Sao_Paulo') at time zone 'America/Sao_Paulo')
      group by account_id`,
    [accountIds],
  );
  return new Map(rows.map((r) => [r.account_id, BigInt(r.spent)]));
}

/**
 * One call of a posting function (src/ledger/sql/) that answers one row; `casts` are its parameters' casts, in order.
 * A named prepared statement outside a transaction (every request), on the transaction's connection inside one (an
 * approval executing): `queryPrepared`.
 */
export async function callPostingFunction<R>(em: EntityManager, fn: string, columns: string, casts: readonly string[], params: unknown[]): Promise<R> {
  const [row] = await queryPrepared<R>(em, fn, callOf(fn, columns, casts), params);
  return row!;
}

/**
 * One call of a batch posting function; `columns` must include `ord`, the position of the row's request. The rows come
 * back in request order (by number: as text, 10 would come before 2). Fails if a request got no answer. Like
 * `callPostingFunction`, a named prepared statement outside a transaction (the request path's queues), the
 * transaction's connection inside one (a batch payout's items, paid with their own records).
 */
export async function callPostingBatch<R>(em: EntityManager, fn: string, columns: string, casts: readonly string[], params: unknown[], requests: number): Promise<R[]> {
  const rows = await queryPrepared<R & { ord: string }>(em, fn, callOf(fn, columns, casts), params);
  if (rows.length !== requests) throw new Error(`${fn} answered ${rows.length} of ${requests} requests`);
  return rows.sort((a, b) => Number(a.ord) - Number(b.ord));
}

const callOf = (fn: string, columns: string, casts: readonly string[]) => `select ${columns} from ${fn}(${casts.map((cast, i) => `$${i + 1}${cast}`).join(', ')})`;
