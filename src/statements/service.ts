import type { EntityManager } from '@mikro-orm/postgresql';
import type { Account } from '../accounts/entities.ts';
import { centsToReais } from '../shared/money.ts';
import { decodeCursor, encodeCursor } from '../shared/pagination.ts';
import { entriesByMovement, MOVEMENT_COLUMNS, type EntryRow, type MovementRow } from './movements.ts';

export interface StatementQuery {
  /** YYYY-MM-DD, inclusive, UTC. */
  startDate: string;
  endDate: string;
  limit: number;
  /** The previous page's nextCursor. */
  cursor?: string | undefined;
}

const reais = (cents: string) => centsToReais(BigInt(cents));

/** Section 2.6. */
function transaction(m: MovementRow, entries: EntryRow[], pixAccountId: string) {
  const credit = m.direction === 'CREDIT';
  return {
    id: m.statement_id,
    amount: reais(m.amount_cents),
    credit,
    description: m.description,
    type: m.channel,
    status: m.status,
    statusExternal: m.status_external,
    createdAt: m.created_at,
    balanceAfterTransaction: reais(m.balance_after_cents),
    endToEndId: m.end_to_end_id,
    // The counterparts were stored with the movement; the account's own Pix id is added on outgoing ones.
    statementMetadata: credit ? m.metadata : { ...m.metadata, pixAccountId },
    ledgerEntries: entries.map((e) => ({ id: e.id, kind: e.kind, amount: reais(e.amount_cents), balanceAfter: reais(e.balance_after_cents), createdAt: e.created_at })),
  };
}

/**
 * One page of the account's statement, newest first. Keyset pagination on (created_at, id) over
 * `movement_statement_idx`: movements posted while a client pages are newer than its cursor (postings take their
 * timestamp under the account lock), so a walk neither repeats nor skips what existed when it started.
 */
export async function statementPage(em: EntityManager, account: Account, q: StatementQuery, cursorKey: string) {
  const after = q.cursor === undefined ? null : decodeCursor(cursorKey, `statement:${account.id}`, q.cursor);
  const rows = await em.execute<MovementRow[]>(
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
    [account.id, q.startDate, q.endDate, ...(after ? [after.at, after.at, after.id] : []), q.limit + 1],
  );
  const page = rows.slice(0, q.limit);
  const last = page.at(-1);
  const nextCursor = rows.length > q.limit && last ? encodeCursor(cursorKey, `statement:${account.id}`, { at: last.position, id: last.id }) : null;
  const entries = await entriesByMovement(em, page.map((m) => m.id));
  return {
    transactions: page.map((m) => transaction(m, entries.get(m.id)!, account.pixAccountId)),
    pagination: { limit: q.limit, nextCursor, hasMore: nextCursor !== null },
  };
}
