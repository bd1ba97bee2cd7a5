import type { EntityManager } from '@mikro-orm/postgresql';
import { isoUtc, type Cursor } from '../shared/pagination.ts';
import type { ChargeStatus } from '../../workflows/contracts/pix-charge.ts';
import type { PixParty, PixReturn } from './provider.ts';

/**
 * The `pix_charge` and `pix_charge_refund` tables: every SQL statement on a charge and its refunds, but the recording
 * of a refund with its posting (`refund_pix_charge`, src/ledger/sql/). Timestamps come out as ISO 8601 UTC text and
 * cents as bigint; callers hold the transaction.
 */

export interface PixCharge {
  id: string;
  tenantId: string;
  accountId: string;
  pixAccountId: string;
  txid: string;
  amountCents: bigint;
  tag: string | null;
  brCode: string;
  status: ChargeStatus;
  paidCents: bigint;
  refundedCents: bigint;
  payer: PixParty | null;
  endToEndId: string | null;
  movementId: string | null;
  requestHash: string;
  expiresAt: string;
  createdAt: string;
  paidAt: string | null;
  /** `createdAt` with microseconds: the listing cursor. */
  position: string;
  /** Its expiry has passed (by the database's clock), whether or not its timer has marked it EXPIRED yet. */
  lapsed: boolean;
}

interface PixChargeRow {
  id: string;
  tenant_id: string;
  account_id: string;
  pix_account_id: string;
  txid: string;
  amount_cents: string;
  tag: string | null;
  br_code: string;
  status: ChargeStatus;
  paid_cents: string;
  refunded_cents: string;
  payer: PixParty | null;
  end_to_end_id: string | null;
  movement_id: string | null;
  request_hash: string;
  expires_at: string;
  created_at: string;
  paid_at: string | null;
  position: string;
  lapsed: boolean;
}

const COLUMNS = `c.id, c.tenant_id, c.account_id, c.pix_account_id, c.txid, c.amount_cents::text as amount_cents, c.tag, c.br_code,
  c.status, c.paid_cents::text as paid_cents, c.refunded_cents::text as refunded_cents, c.payer, c.end_to_end_id, c.movement_id,
  c.request_hash, ${isoUtc('c.expires_at')} as expires_at, ${isoUtc('c.created_at')} as created_at, ${isoUtc('c.paid_at')} as paid_at,
  ${isoUtc('c.created_at', 'US')} as position, c.expires_at <= now() as lapsed`;

function toPixCharge(r: PixChargeRow): PixCharge {
  return {
    id: r.id,
    tenantId: r.tenant_id,
    accountId: r.account_id,
    pixAccountId: r.pix_account_id,
    txid: r.txid,
    amountCents: BigInt(r.amount_cents),
    tag: r.tag,
    brCode: r.br_code,
    status: r.status,
    paidCents: BigInt(r.paid_cents),
    refundedCents: BigInt(r.refunded_cents),
    payer: r.payer,
    endToEndId: r.end_to_end_id,
    movementId: r.movement_id,
    requestHash: r.request_hash,
    expiresAt: r.expires_at,
    createdAt: r.created_at,
    paidAt: r.paid_at,
    position: r.position,
    lapsed: r.lapsed,
  };
}

async function one(em: EntityManager, sql: string, params: unknown[]): Promise<PixCharge | null> {
  const [row] = await em.execute<PixChargeRow[]>(sql, params);
  return row ? toPixCharge(row) : null;
}

export type NewCharge = Pick<PixCharge, 'id' | 'tenantId' | 'accountId' | 'pixAccountId' | 'txid' | 'amountCents' | 'tag' | 'brCode' | 'requestHash'> & {
  idempotencyKey: string;
  expiresInSeconds: number;
};

/** Inserts an ACTIVE charge expiring `expiresInSeconds` after now; null when the account's Idempotency-Key is taken. */
export async function insertCharge(em: EntityManager, c: NewCharge): Promise<PixCharge | null> {
  return one(
    em,
    `insert into pix_charge as c (id, tenant_id, account_id, pix_account_id, txid, amount_cents, tag, br_code, status, idempotency_key, request_hash, expires_at)
     values (?, ?, ?, ?, ?, ?, ?, ?, 'ACTIVE', ?, ?, now() + make_interval(secs => ?))
     on conflict (account_id, idempotency_key) do nothing
     returning ${COLUMNS}`,
    [c.id, c.tenantId, c.accountId, c.pixAccountId, c.txid, c.amountCents.toString(), c.tag, c.brCode, c.idempotencyKey, c.requestHash, c.expiresInSeconds],
  );
}

export const findChargeByKey = (em: EntityManager, accountId: string, idempotencyKey: string) =>
  one(em, `select ${COLUMNS} from pix_charge c where c.account_id = ? and c.idempotency_key = ?`, [accountId, idempotencyKey]);

export const findChargeOfAccount = (em: EntityManager, accountId: string, chargeId: string) =>
  one(em, `select ${COLUMNS} from pix_charge c where c.id = ? and c.account_id = ?`, [chargeId, accountId]);

/** The charge a location names: txids are unique across the platform. */
export const findChargeByTxid = (em: EntityManager, txid: string) => one(em, `select ${COLUMNS} from pix_charge c where c.txid = ?`, [txid]);

/**
 * The locks on a charge, held for the rest of the transaction, so a payment, a refund and the expiry of one charge queue
 * behind each other: a payment finds it by tenant and txid, a refund by account and id.
 */
export const lockChargeByTxid = (em: EntityManager, tenantId: string, txid: string) =>
  one(em, `select ${COLUMNS} from pix_charge c where c.tenant_id = ? and c.txid = ? for update`, [tenantId, txid]);

export const lockChargeOfAccount = (em: EntityManager, accountId: string, chargeId: string) =>
  one(em, `select ${COLUMNS} from pix_charge c where c.id = ? and c.account_id = ? for update`, [chargeId, accountId]);

/** One page of an account's charges, newest first, after `after`; `limit` rows at most. */
export async function listChargesOfAccount(em: EntityManager, accountId: string, status: ChargeStatus | undefined, after: Cursor | null, limit: number): Promise<PixCharge[]> {
  const rows = await em.execute<PixChargeRow[]>(
    `select ${COLUMNS} from pix_charge c
      where c.account_id = ? ${status ? 'and c.status = ?' : ''} ${after ? 'and (c.created_at, c.id) < (?::timestamptz, ?)' : ''}
      order by c.created_at desc, c.id desc limit ?`,
    [accountId, ...(status ? [status] : []), ...(after ? [after.at, after.id] : []), limit],
  );
  return rows.map(toPixCharge);
}

export async function markChargePaid(em: EntityManager, chargeId: string, payment: { payer: PixParty; endToEndId: string; movementId: string; paidAt: Date }): Promise<void> {
  await em.execute(`update pix_charge set status = 'PAID', paid_cents = amount_cents, payer = ?::jsonb, end_to_end_id = ?, movement_id = ?, paid_at = ? where id = ?`, [
    JSON.stringify(payment.payer),
    payment.endToEndId,
    payment.movementId,
    payment.paidAt,
    chargeId,
  ]);
}

/** ACTIVE → EXPIRED; null when the charge was not ACTIVE (paid, or expired already). */
export const expireActiveCharge = (em: EntityManager, chargeId: string) =>
  one(em, `update pix_charge c set status = 'EXPIRED' where c.id = ? and c.status = 'ACTIVE' returning ${COLUMNS}`, [chargeId]);

export const findCharge = (em: EntityManager, chargeId: string) => one(em, `select ${COLUMNS} from pix_charge c where c.id = ?`, [chargeId]);

export interface ChargeRefund {
  id: string;
  chargeId: string;
  amountCents: bigint;
  refundEndToEndId: string;
  createdAt: string;
}

interface ChargeRefundRow {
  id: string;
  charge_id: string;
  amount_cents: string;
  refund_end_to_end_id: string;
  created_at: string;
}

const REFUND_COLUMNS = `r.id, r.charge_id, r.amount_cents::text as amount_cents, r.refund_end_to_end_id, ${isoUtc('r.created_at')} as created_at`;

const toChargeRefund = (r: ChargeRefundRow): ChargeRefund => ({
  id: r.id,
  chargeId: r.charge_id,
  amountCents: BigInt(r.amount_cents),
  refundEndToEndId: r.refund_end_to_end_id,
  createdAt: r.created_at,
});

export async function findRefundByKey(em: EntityManager, chargeId: string, idempotencyKey: string): Promise<ChargeRefund | null> {
  const [row] = await em.execute<ChargeRefundRow[]>(`select ${REFUND_COLUMNS} from pix_charge_refund r where r.charge_id = ? and r.idempotency_key = ?`, [chargeId, idempotencyKey]);
  return row ? toChargeRefund(row) : null;
}

/** A refund as the devolução it sends: its own end-to-end id, the end-to-end id of the payment it returns, the amount. */
export async function findRefundReturn(em: EntityManager, refundId: string): Promise<PixReturn | null> {
  const [row] = await em.execute<{ end_to_end_id: string; original_end_to_end_id: string; amount_cents: string }[]>(
    `select r.refund_end_to_end_id as end_to_end_id, c.end_to_end_id as original_end_to_end_id, r.amount_cents::text as amount_cents
       from pix_charge_refund r join pix_charge c on c.id = r.charge_id where r.id = ?`,
    [refundId],
  );
  return row ? { endToEndId: row.end_to_end_id, originalEndToEndId: row.original_end_to_end_id, amountCents: BigInt(row.amount_cents) } : null;
}
