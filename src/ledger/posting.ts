import type { EntityManager } from '@mikro-orm/postgresql';
import { newCuid, newUuid } from '../shared/ids.ts';
import { findTenantAccountId, insertPosting, postingTime } from './store.ts';
import type { LockedAccount, MovementInput, PostedMovement } from './types.ts';

/** The posting API: lock the accounts, then post movements on them, in one transaction. */
export { lockAccounts } from './store.ts';
export type { LockedAccount, MovementInput, PostedMovement } from './types.ts';

export class InsufficientBalance extends Error {
  readonly accountId: string;
  constructor(accountId: string) {
    super(`posting would overdraw account ${accountId}`);
    this.accountId = accountId;
  }
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

  const now = await postingTime(em);
  for (const p of posted) p.createdAt = now;
  const changed = [...balances].filter(([id, b]) => b !== locked.get(id)!.balanceCents);
  await insertPosting(em, movements, posted, changed);
  return posted;
}

const tenantAccounts = new Map<string, string>();

/** One of the tenant's own accounts (created with the tenant); their ids never change, so they are cached. */
async function tenantAccountId(em: EntityManager, tenantId: string, kind: 'FEE_REVENUE' | 'SETTLEMENT'): Promise<string> {
  const key = `${kind}:${tenantId}`;
  const cached = tenantAccounts.get(key);
  if (cached) return cached;
  const id = await findTenantAccountId(em, tenantId, kind);
  if (!id) throw new Error(`tenant ${tenantId} has no ${kind} account`);
  tenantAccounts.set(key, id);
  return id;
}
/** Where the tenant's fees accrue. */
export const feeRevenueAccountId = (em: EntityManager, tenantId: string) => tenantAccountId(em, tenantId, 'FEE_REVENUE');
/** The Pix provider's side of every Pix in or out: its balance is minus the money the tenant holds through Pix. */
export const settlementAccountId = (em: EntityManager, tenantId: string) => tenantAccountId(em, tenantId, 'SETTLEMENT');
