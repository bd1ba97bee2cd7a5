import type { EntityManager } from '@mikro-orm/postgresql';
import type { LimitBreach } from '../shared/errors.ts';
import { queryPrepared } from '../persistence/prepared.ts';
import { isoUtc } from '../shared/pagination.ts';
import type { PixKeyType } from './keys.ts';
import type { Beneficiary } from './provider.ts';

/**
 * The `pix_payout` table: every SQL statement that reads or writes a Pix payout, but the posting functions' (its debit,
 * reversal and returns, in src/ledger/sql/; its notifications', in src/pix/sql/).
 */

export type PayoutChannel = 'PIX_OUT' | 'QR_CODE_OUT';
/** Where a payout stands: REQUESTED (recorded, not debited), REJECTED (refused before any debit), then as the provider says. */
export type PixPayoutState = 'REQUESTED' | 'REJECTED' | 'PROCESSING' | 'POSTED' | 'FAILED' | 'CANCELLED' | 'REFUNDED';

/** What the payer scanned, for a QR Code payout; `location` only for a dynamic code (its charge's payload URL). */
export interface PayoutQr {
  txid: string | null;
  merchantName: string;
  merchantCity: string;
  location?: string;
}

export interface PixPayout {
  id: string;
  tenantId: string;
  accountId: string;
  channel: PayoutChannel;
  amountCents: bigint;
  /** Decided with the debit; null while REQUESTED. */
  feeCents: bigint | null;
  pixKey: string;
  pixKeyType: PixKeyType;
  beneficiary: Beneficiary;
  qr: PayoutQr | null;
  description: string;
  requestHash: string;
  state: PixPayoutState;
  reason: string | null;
  /** REJECTED with LIMIT_EXCEEDED: the limit the amount broke. */
  limitBreach: LimitBreach | null;
  movementId: string | null;
  endToEndId: string | null;
  refundedCents: bigint;
  /** ISO 8601 UTC. */
  createdAt: string;
}

interface PixPayoutRow {
  id: string;
  tenant_id: string;
  account_id: string;
  channel: PayoutChannel;
  amount_cents: string;
  fee_cents: string | null;
  pix_key: string;
  pix_key_type: PixKeyType;
  beneficiary: Beneficiary;
  qr: PayoutQr | null;
  description: string;
  request_hash: string;
  status: PixPayoutState;
  reason: string | null;
  refusal_details: LimitBreach | null;
  movement_id: string | null;
  end_to_end_id: string | null;
  refunded_cents: string;
  created_at: string;
}

const COLUMNS = `p.id, p.tenant_id, p.account_id, p.channel, p.amount_cents::text as amount_cents, p.fee_cents::text as fee_cents, p.pix_key,
  p.pix_key_type, p.beneficiary, p.qr, p.description, p.request_hash, p.status, p.reason, p.refusal_details, p.movement_id, p.end_to_end_id,
  p.refunded_cents::text as refunded_cents, ${isoUtc('p.created_at')} as created_at`;

function toPixPayout(r: PixPayoutRow): PixPayout {
  return {
    id: r.id,
    tenantId: r.tenant_id,
    accountId: r.account_id,
    channel: r.channel,
    amountCents: BigInt(r.amount_cents),
    feeCents: r.fee_cents === null ? null : BigInt(r.fee_cents),
    pixKey: r.pix_key,
    pixKeyType: r.pix_key_type,
    beneficiary: r.beneficiary,
    qr: r.qr,
    description: r.description,
    requestHash: r.request_hash,
    state: r.status,
    reason: r.reason,
    limitBreach: r.refusal_details,
    movementId: r.movement_id,
    endToEndId: r.end_to_end_id,
    refundedCents: BigInt(r.refunded_cents),
    createdAt: r.created_at,
  };
}

async function one(em: EntityManager, sql: string, params: unknown[]): Promise<PixPayout | null> {
  const [row] = await em.execute<PixPayoutRow[]>(sql, params);
  return row ? toPixPayout(row) : null;
}

export const findPayout = (em: EntityManager, payoutId: string) => one(em, `select ${COLUMNS} from pix_payout p where p.id = ?`, [payoutId]);

/** The payer as the receiving institution sees them: the account's holder and branch, and the tenant's name. */
export interface PayoutPayer {
  name: string;
  document: string;
  institution: string;
  branch: string;
  account: string;
}

interface PayoutPayerRow {
  payer_name: string;
  payer_document: string;
  payer_institution: string;
  payer_branch: string;
  payer_account: string;
}

/** The payout and its payer in one query: what a submission to the provider needs (the worker reads it per payout). */
export async function findPayoutWithPayer(em: EntityManager, payoutId: string): Promise<{ payout: PixPayout; payer: PayoutPayer } | null> {
  // Prepared: planning this join took longer than running it (0.48 ms a call, 3.2 s of PostgreSQL's 14.2 s while a burst's
  // payouts drained; bench/README.md).
  const [row] = await queryPrepared<PixPayoutRow & PayoutPayerRow>(
    em,
    'find_payout_with_payer',
    `select ${COLUMNS}, h.name as payer_name, h.document as payer_document, t.name as payer_institution,
            a.agency as payer_branch, a.number as payer_account
       from pix_payout p
       join account a on a.id = p.account_id and a.tenant_id = p.tenant_id
       join holder h on h.id = a.holder_id and h.tenant_id = p.tenant_id
       join tenant t on t.id = p.tenant_id
      where p.id = $1`,
    [payoutId],
  );
  if (!row) return null;
  return {
    payout: toPixPayout(row),
    payer: { name: row.payer_name, document: row.payer_document, institution: row.payer_institution, branch: row.payer_branch, account: row.payer_account },
  };
}

/** The payout of an account's Idempotency-Key, if a request under that key was recorded. */
export const findPayoutByKey = (em: EntityManager, accountId: string, idempotencyKey: string) =>
  one(em, `select ${COLUMNS} from pix_payout p where p.account_id = ? and p.idempotency_key = ?`, [accountId, idempotencyKey]);
