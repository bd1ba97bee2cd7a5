/** The `trusted_contact` table's SQL. The rule that reads it on the payment path is `is_trusted_contact` (rules.sql). */
import type { EntityManager } from '@mikro-orm/postgresql';
import { isoUtc } from '../shared/pagination.ts';
import type { PixKeyType } from '../pix/keys.ts';

/** Who a contact is: a Pix key, or a branch and account of the tenant (branch 4 digits, number without leading zeros). */
export type ContactTarget = { kind: 'PIX_KEY'; pixKey: string; pixKeyType: PixKeyType } | { kind: 'ACCOUNT'; branch: string; account: string };

export type Contact = ContactTarget & {
  id: string;
  tenantId: string;
  accountId: string;
  /** ISO 8601 UTC. */
  createdAt: string;
  /** When the contact becomes (or became) trusted: the end of its wait. */
  trustsAt: string;
  /** Since when it is trusted: set by its delayed-effect workflow once `trustsAt` passed; null until then. */
  trustedFrom: string | null;
  removedAt: string | null;
  /** `created_at` with microseconds: the listing cursor. */
  position: string;
};

interface ContactRow {
  id: string;
  tenant_id: string;
  account_id: string;
  kind: 'PIX_KEY' | 'ACCOUNT';
  pix_key: string | null;
  pix_key_type: PixKeyType | null;
  branch: string | null;
  account_number: string | null;
  created_at: string;
  trusts_at: string;
  trusted_from: string | null;
  removed_at: string | null;
  position: string;
}

function toContact(row: ContactRow): Contact {
  const target: ContactTarget =
    row.kind === 'PIX_KEY' ? { kind: 'PIX_KEY', pixKey: row.pix_key!, pixKeyType: row.pix_key_type! } : { kind: 'ACCOUNT', branch: row.branch!, account: row.account_number! };
  return {
    ...target,
    id: row.id,
    tenantId: row.tenant_id,
    accountId: row.account_id,
    createdAt: row.created_at,
    trustsAt: row.trusts_at,
    trustedFrom: row.trusted_from,
    removedAt: row.removed_at,
    position: row.position,
  };
}

const COLUMNS = `id, tenant_id, account_id, kind, pix_key, pix_key_type, branch, account_number, ${isoUtc('created_at')} as created_at,
  ${isoUtc('trusts_at')} as trusts_at, ${isoUtc('trusted_from')} as trusted_from, ${isoUtc('removed_at')} as removed_at,
  ${isoUtc('created_at', 'US')} as position`;

export interface NewContact {
  id: string;
  tenantId: string;
  accountId: string;
  target: ContactTarget;
  /** The wait before it is trusted, counted from the database's clock at the insert. */
  delayMs: number;
}

/** Records a contact, waiting to be trusted; null when the account already has this one (not removed). */
export async function insertContact(em: EntityManager, c: NewContact): Promise<Contact | null> {
  const t = c.target;
  const [row] = await em.execute<ContactRow[]>(
    `insert into trusted_contact (id, tenant_id, account_id, kind, pix_key, pix_key_type, branch, account_number, trusts_at)
     values (?, ?, ?, ?, ?, ?, ?, ?, now() + make_interval(secs => ?::double precision / 1000))
     on conflict do nothing
     returning ${COLUMNS}`,
    [
      c.id,
      c.tenantId,
      c.accountId,
      t.kind,
      t.kind === 'PIX_KEY' ? t.pixKey : null,
      t.kind === 'PIX_KEY' ? t.pixKeyType : null,
      t.kind === 'ACCOUNT' ? t.branch : null,
      t.kind === 'ACCOUNT' ? t.account : null,
      c.delayMs,
    ],
  );
  return row ? toContact(row) : null;
}

/** The account's contacts not removed, newest first, after the cursor's position. */
export async function listContactsOf(em: EntityManager, accountId: string, after: { at: string; id: string } | null, limit: number): Promise<Contact[]> {
  const rows = await em.execute<ContactRow[]>(
    `select ${COLUMNS} from trusted_contact
      where account_id = ? and removed_at is null ${after ? 'and (created_at, id) < (?::timestamptz, ?::uuid)' : ''}
      order by created_at desc, id desc limit ?`,
    [accountId, ...(after ? [after.at, after.id] : []), limit],
  );
  return rows.map(toContact);
}

/** Removes the account's contact; null when it has no such contact (or it was removed already). */
export async function markContactRemoved(em: EntityManager, accountId: string, contactId: string): Promise<Contact | null> {
  const [row] = await em.execute<ContactRow[]>(
    `update trusted_contact set removed_at = now() where id = ? and account_id = ? and removed_at is null returning ${COLUMNS}`,
    [contactId, accountId],
  );
  return row ? toContact(row) : null;
}

/**
 * Where a contact stands for its delayed effect, read under lock so a removal waits for (or precedes) the trust:
 * trusted already (removed since or not: the effect was applied), removed while it waited, or waiting or due.
 */
export type TrustState = 'TRUSTED' | 'REMOVED' | 'WAITING' | 'DUE';

export async function lockTrustState(em: EntityManager, contactId: string): Promise<TrustState | null> {
  const [row] = await em.execute<{ state: TrustState }[]>(
    `select case when trusted_from is not null then 'TRUSTED' when removed_at is not null then 'REMOVED'
                 when trusts_at > now() then 'WAITING' else 'DUE' end as state
       from trusted_contact where id = ? for update`,
    [contactId],
  );
  return row?.state ?? null;
}

/** A contact due to be trusted is trusted from now. */
export async function markTrusted(em: EntityManager, contactId: string): Promise<void> {
  await em.execute('update trusted_contact set trusted_from = now() where id = ? and trusted_from is null', [contactId]);
}
/** `is_trusted_contact` (rules.sql) for one receiver of the account, now. */
export async function isTrustedNow(em: EntityManager, accountId: string, receiver: { pixKey: string | null; branch: string | null; account: string | null }): Promise<boolean> {
  const [row] = await em.execute<{ trusted: boolean }[]>('select is_trusted_contact(?, ?, ?, ?, now()) as trusted', [
    accountId,
    receiver.pixKey,
    receiver.branch,
    receiver.account,
  ]);
  return row!.trusted;
}
