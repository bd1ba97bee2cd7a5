import type { EntityManager } from '@mikro-orm/postgresql';
import type { Account } from '../accounts/entities.ts';
import { centsToReais } from '../shared/money.ts';
import { entriesByMovement, lastMovementAt, movementsPage, type EntryRow, type MovementRow } from '../ledger/store.ts';
import { decodeCursor, pageOf } from '../shared/pagination.ts';

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
function transaction(movement: MovementRow, entries: EntryRow[], pixAccountId: string) {
  const credit = movement.direction === 'CREDIT';
  return {
    id: movement.statement_id,
    amount: reais(movement.amount_cents),
    credit,
    description: movement.description,
    type: movement.channel,
    status: movement.status,
    statusExternal: movement.status_external,
    createdAt: movement.created_at,
    balanceAfterTransaction: reais(movement.balance_after_cents),
    endToEndId: movement.end_to_end_id,
    // The counterparts were stored with the movement; the account's own Pix id is added on outgoing ones.
    statementMetadata: credit ? movement.metadata : { ...movement.metadata, pixAccountId },
    ledgerEntries: entries.map((e) => ({ id: e.id, kind: e.kind, amount: reais(e.amount_cents), balanceAfter: reais(e.balance_after_cents), createdAt: e.created_at })),
  };
}

/**
 * One page of the account's statement, newest first. Keyset pagination on (created_at, id) over
 * `movement_statement_idx`: movements posted while a client pages are newer than its cursor (postings take their
 * timestamp under the account lock), so a walk neither repeats nor skips what existed when it started.
 */
export async function statementPage(em: EntityManager, account: Account, query: StatementQuery, cursorKey: string) {
  const after = query.cursor === undefined ? null : decodeCursor(cursorKey, `statement:${account.id}`, query.cursor);
  const rows = await movementsPage(em, account.id, query, after, query.limit + 1);
  const { items, pagination } = pageOf(rows, query.limit, cursorKey, `statement:${account.id}`);
  const entries = await entriesByMovement(em, items.map((m) => m.id));
  return {
    transactions: items.map((m) => transaction(m, entries.get(m.id)!, account.pixAccountId)),
    pagination,
  };
}

/**
 * The balance of the account at an instant (ISO 8601), or now: exactly the balance after the last movement it includes,
 * read in one indexed read (ledger/store.ts, lastMovementAt).
 */
export async function balanceAt(em: EntityManager, account: Account, at: string | undefined) {
  const last = await lastMovementAt(em, account.id, at ?? null);
  return {
    accountId: account.id,
    at: at === undefined ? null : new Date(at).toISOString(),
    balance: last ? reais(last.balance_after_cents) : 0,
    lastTransactionId: last?.statement_id ?? null,
  };
}
