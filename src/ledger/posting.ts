import type { EntityManager } from '@mikro-orm/postgresql';
import { newCuid, newUuid } from '../shared/ids.ts';

export type EntryKind = 'PRIMARY' | 'FEE' | 'REVERSAL';
export type MovementSource = 'TEF_OUT' | 'TEF_IN' | 'PIX_OUT' | 'QR_CODE_OUT' | 'PIX_IN' | 'FEE_REVENUE' | 'SETTLEMENT' | 'REVERSAL';
export type PayoutStatus = 'PENDING' | 'PROCESSING' | 'POSTED' | 'FAILED' | 'CANCELLED' | 'REFUNDED';

export interface LockedAccount {
  id: string;
  tenantId: string;
  kind: 'HOLDER' | 'FEE_REVENUE' | 'SETTLEMENT';
  status: 'PENDING' | 'APPROVED' | 'REJECTED';
  balanceCents: bigint;
  agency: string;
  number: string;
  pixAccountId: string;
  /** The one rule for whether the account may send or receive money (`account_may_move_money`, in SQL). */
  mayMoveMoney: boolean;
  holderName: string | null;
  holderDocument: string | null;
}

export interface MovementInput {
  accountId: string;
  tenantId: string;
  /** The operation (tevId, payoutId…) the movement belongs to: one per operation, account and source. */
  operationId: string;
  source: MovementSource;
  channel: 'TEF' | 'PIX';
  direction: 'DEBIT' | 'CREDIT';
  status: 'DONE' | 'PENDING' | 'FAILED';
  payoutStatus: PayoutStatus | null;
  statusExternal: string;
  amountCents: bigint;
  feeCents: bigint;
  description: string;
  externalRef: string | null;
  endToEndId: string | null;
  reversesMovementId: string | null;
  metadata: Record<string, unknown>;
  /** Signed cents, applied in order; the movement's entries. */
  lines: { kind: EntryKind; amountCents: bigint }[];
}

export interface PostedEntry {
  id: string;
  kind: EntryKind;
  amountCents: bigint;
  balanceAfterCents: bigint;
}

export interface PostedMovement {
  id: string;
  statementId: string;
  accountId: string;
  balanceAfterCents: bigint;
  createdAt: string;
  entries: PostedEntry[];
}

export class InsufficientBalance extends Error {
  readonly accountId: string;
  constructor(accountId: string) {
    super(`posting would overdraw account ${accountId}`);
    this.accountId = accountId;
  }
}

/**
 * Locks accounts for the rest of the transaction, always in id order, so two postings that touch the same accounts
 * (even in opposite directions) queue instead of deadlocking. `FOR NO KEY UPDATE`: a posting changes balances, never
 * keys, so it must not conflict with the KEY SHARE locks that foreign-key checks take (inserting a transfer that
 * references an account being posted would otherwise deadlock with the posting).
 */
interface LockedAccountRow {
  id: string;
  tenant_id: string;
  kind: LockedAccount['kind'];
  status: LockedAccount['status'];
  balance: string;
  agency: string;
  number: string;
  pix_account_id: string;
  may_move_money: boolean;
  holder_name: string | null;
  holder_document: string | null;
}

export async function lockAccounts(em: EntityManager, accountIds: string[]): Promise<Map<string, LockedAccount>> {
  const rows = await em.execute<LockedAccountRow[]>(
    `select a.id, a.tenant_id, a.kind, a.status, a.balance_cents::text as balance, a.agency, a.number, a.pix_account_id,
            coalesce(account_may_move_money(a.status, h.status, h.onboarding_step), false) as may_move_money,
            h.name as holder_name, h.document as holder_document
       from account a left join holder h on h.id = a.holder_id
      where a.id in (?)
      order by a.id
        for no key update of a`,
    [[...new Set(accountIds)]],
  );
  return new Map(
    rows.map((r) => [
      r.id,
      {
        id: r.id,
        tenantId: r.tenant_id,
        kind: r.kind,
        status: r.status,
        balanceCents: BigInt(r.balance),
        agency: r.agency,
        number: r.number,
        pixAccountId: r.pix_account_id,
        mayMoveMoney: r.may_move_money,
        holderName: r.holder_name,
        holderDocument: r.holder_document,
      },
    ]),
  );
}

/**
 * Writes movements, their ledger entries and the new balances in the caller's transaction, after `lockAccounts`.
 * Double entry: the lines of one posting sum to zero. No balance may go below zero, except the settlement account's
 * (money at the Pix provider). Timestamps are taken after the
 * locks, so on each account they follow commit order (the statement cursor relies on it).
 */
export async function postMovements(em: EntityManager, locked: Map<string, LockedAccount>, movements: MovementInput[]): Promise<PostedMovement[]> {
  const total = movements.reduce((sum, m) => sum + m.lines.reduce((s, l) => s + l.amountCents, 0n), 0n);
  if (total !== 0n) throw new Error(`unbalanced posting: lines sum to ${total}`);

  const balances = new Map([...locked].map(([id, a]) => [id, a.balanceCents]));
  const posted: PostedMovement[] = movements.map((m) => {
    let balance = balances.get(m.accountId);
    if (balance === undefined) throw new Error(`account ${m.accountId} was not locked`);
    const mayGoNegative = locked.get(m.accountId)!.kind === 'SETTLEMENT';
    const entries = m.lines.map((line) => {
      balance = balance! + line.amountCents;
      if (balance < 0n && !mayGoNegative) throw new InsufficientBalance(m.accountId);
      return { id: newCuid(), kind: line.kind, amountCents: line.amountCents, balanceAfterCents: balance };
    });
    balances.set(m.accountId, balance);
    return { id: newCuid(), statementId: newUuid(), accountId: m.accountId, balanceAfterCents: balance, createdAt: '', entries };
  });

  const [{ now }] = (await em.execute<{ now: string }[]>('select clock_timestamp()::text as now')) as [{ now: string }];
  const movementValues: unknown[] = [];
  movements.forEach((m, i) => {
    const p = posted[i]!;
    p.createdAt = now;
    movementValues.push(
      p.id, p.statementId, m.tenantId, m.accountId, m.operationId, m.source, m.channel, m.direction, m.status, m.payoutStatus,
      m.statusExternal, m.amountCents.toString(), m.feeCents.toString(), p.balanceAfterCents.toString(), m.description,
      m.externalRef, m.endToEndId, m.reversesMovementId, JSON.stringify(m.metadata), now,
    );
  });
  await em.execute(
    `insert into movement (id, statement_id, tenant_id, account_id, operation_id, source, channel, direction, status, payout_status,
                           status_external, amount_cents, fee_cents, balance_after_cents, description, external_ref, end_to_end_id,
                           reverses_movement_id, metadata, created_at)
     values ${movements.map(() => '(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?::jsonb, ?::timestamptz)').join(', ')}`,
    movementValues,
  );

  const entryValues: unknown[] = [];
  let entryCount = 0;
  posted.forEach((p) =>
    p.entries.forEach((e, line) => {
      entryCount++;
      entryValues.push(e.id, p.id, p.accountId, line + 1, e.kind, e.amountCents.toString(), e.balanceAfterCents.toString(), now);
    }),
  );
  await em.execute(
    `insert into ledger_entry (id, movement_id, account_id, line, kind, amount_cents, balance_after_cents, created_at)
     values ${Array.from({ length: entryCount }, () => '(?, ?, ?, ?, ?, ?, ?, ?::timestamptz)').join(', ')}`,
    entryValues,
  );

  const changed = [...balances].filter(([id, b]) => b !== locked.get(id)!.balanceCents);
  await em.execute(
    `update account a set balance_cents = v.balance::bigint
       from (values ${changed.map(() => '(?::uuid, ?)').join(', ')}) as v(id, balance)
      where a.id = v.id`,
    changed.flatMap(([id, b]) => [id, b.toString()]),
  );
  return posted;
}

const tenantAccounts = new Map<string, string>();

/** One of the tenant's own accounts (created with the tenant); their ids never change, so they are cached. */
async function tenantAccountId(em: EntityManager, tenantId: string, kind: 'FEE_REVENUE' | 'SETTLEMENT'): Promise<string> {
  const key = `${kind}:${tenantId}`;
  const cached = tenantAccounts.get(key);
  if (cached) return cached;
  const [row] = await em.execute<{ id: string }[]>('select id from account where tenant_id = ? and kind = ?', [tenantId, kind]);
  if (!row) throw new Error(`tenant ${tenantId} has no ${kind} account`);
  tenantAccounts.set(key, row.id);
  return row.id;
}

/** Where the tenant's fees accrue. */
export const feeRevenueAccountId = (em: EntityManager, tenantId: string) => tenantAccountId(em, tenantId, 'FEE_REVENUE');
/** The Pix provider's side of every Pix in or out: its balance is minus the money the tenant holds through Pix. */
export const settlementAccountId = (em: EntityManager, tenantId: string) => tenantAccountId(em, tenantId, 'SETTLEMENT');
