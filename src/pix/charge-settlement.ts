import type { EntityManager } from '@mikro-orm/postgresql';
import type { Account } from '../accounts/entities.ts';
import { enqueueEvents } from '../events/outbox.ts';
import { InsufficientBalance, lockAccounts, postMovements, settlementAccountId, type MovementInput } from '../ledger/posting.ts';
import { idempotencyConflict } from '../shared/idempotency.ts';
import { AppError, notFound } from '../shared/errors.ts';
import { newCuid } from '../shared/ids.ts';
import { isoUtc } from '../shared/pagination.ts';
import { paymentDate } from '../shared/time.ts';
import { BANK_ISPB } from '../transfers/metadata.ts';
import { CHARGE_COLUMNS, type ChargeRow } from './charges.ts';
import { pixEndToEndId } from './end-to-end.ts';
import { creditIncomingPix } from './incoming.ts';

/**
 * The money of a charge: its payment (like an incoming Pix: the amount from the settlement account, the receive fee
 * to the tenant's revenue) and its refunds (back to the settlement account, i.e. to the payer). Each is one database
 * transaction that locks the charge first and the accounts after, so a payment, a refund and the expiry of one charge
 * queue behind each other, and its event is written in the same transaction.
 */

export interface ChargePayer {
  name: string;
  document: string;
  ispb: string;
  institution: string;
  branch: string;
  account: string;
}

export interface ChargePayment {
  tenantId: string;
  txid: string;
  /** What the payer sends; must be the charge's amount. Omitted: the charge's amount. */
  amountCents?: bigint | undefined;
  payer: ChargePayer;
}

const lockCharge = async (tx: EntityManager, where: string, params: unknown[]) =>
  (await tx.execute<(ChargeRow & { lapsed: boolean })[]>(`select ${CHARGE_COLUMNS}, c.expires_at <= now() as lapsed from pix_charge c where ${where} for update`, params))[0];

/** Pays an ACTIVE charge in full: credits its account, marks it PAID and writes `pix.charge.paid`. */
export async function payCharge(em: EntityManager, p: ChargePayment) {
  return em.transactional(async (tx) => {
    const charge = await lockCharge(tx, 'c.tenant_id = ? and c.txid = ?', [p.tenantId, p.txid]);
    if (!charge) throw notFound('Charge');
    if (charge.status === 'PAID') throw new AppError(409, 'CHARGE_ALREADY_PAID', 'This charge was already paid');
    // Past its expiry the charge is dead even if its timer has not marked it yet.
    if (charge.status === 'EXPIRED' || charge.lapsed) throw new AppError(409, 'CHARGE_EXPIRED', 'This charge has expired');
    const amount = BigInt(charge.amount_cents);
    if (p.amountCents !== undefined && p.amountCents !== amount) {
      throw new AppError(422, 'CHARGE_AMOUNT_MISMATCH', `This charge must be paid with exactly ${amount} cents`);
    }

    const { credit, account, endToEndId, fee, at: paidAt } = await creditIncomingPix(tx, {
      tenantId: p.tenantId,
      accountId: charge.account_id,
      amountCents: amount,
      payer: p.payer,
      description: `Pix recebido de ${p.payer.name} (cobrança)`,
      // The statement shows the charge it paid.
      extraMetadata: { txid: charge.txid, chargeId: charge.id },
    });
    await tx.execute(
      `update pix_charge set status = 'PAID', paid_cents = amount_cents, payer = ?::jsonb, end_to_end_id = ?, movement_id = ?, paid_at = ? where id = ?`,
      [JSON.stringify(p.payer), endToEndId, credit.id, paidAt, charge.id],
    );
    await enqueueEvents(tx, [
      {
        tenantId: p.tenantId,
        accountId: account.id,
        pixAccountId: account.pixAccountId,
        type: 'pix.charge.paid',
        data: {
          tag: charge.tag,
          txid: charge.txid,
          chargeId: charge.id,
          payerName: p.payer.name,
          endToEndId,
          movementId: credit.id,
          occurredAt: paidAt.toISOString(),
          amountCents: amount.toString(),
          // interface.md section 6: ISO 8601 UTC here (unlike pix.in.received's "space and offset" text).
          paymentDate: paidAt.toISOString(),
          payerDocument: p.payer.document,
          payerInstitution: p.payer.institution,
          refundEndToEndId: null,
          payerInstitutionIspb: p.payer.ispb,
        },
      },
    ]);
    return {
      chargeId: charge.id,
      txid: charge.txid,
      status: 'PAID' as const,
      movementId: credit.id,
      endToEndId,
      amountCents: amount.toString(),
      feeCents: fee.toString(),
      balanceAfterCents: credit.balanceAfterCents.toString(),
      paidAt: paidAt.toISOString(),
    };
  });
}

interface RefundRow {
  id: string;
  charge_id: string;
  amount_cents: string;
  refund_end_to_end_id: string;
  created_at: string;
}

const REFUND_COLUMNS = `r.id, r.charge_id, r.amount_cents::text as amount_cents, r.refund_end_to_end_id, ${isoUtc('r.created_at')} as created_at`;

export const refundView = (r: RefundRow) => ({
  refundId: r.id,
  chargeId: r.charge_id,
  amountCents: r.amount_cents,
  refundEndToEndId: r.refund_end_to_end_id,
  createdAt: r.created_at,
});

/** A devolution's id: like an end-to-end id, with `D` and the ISPB of the institution returning the money (this one). */
const refundEndToEndId = (at: Date) => `D${pixEndToEndId(BANK_ISPB, at).slice(1)}`;

/**
 * Returns part or all of what a PAID charge received to its payer: debits the account (the receive fee is not
 * returned), credits the settlement account, and writes `pix.charge.refunded`. The Idempotency-Key (per charge)
 * returns the original refund on a retry with the same amount; another amount under that key is 409.
 */
export async function refundCharge(em: EntityManager, account: Account, chargeId: string, idempotencyKey: string, amountCents: bigint) {
  return em.transactional(async (tx) => {
    const charge = await lockCharge(tx, 'c.id = ? and c.account_id = ?', [chargeId, account.id]);
    if (!charge) throw notFound('Charge');
    const [previous] = await tx.execute<RefundRow[]>(`select ${REFUND_COLUMNS} from pix_charge_refund r where r.charge_id = ? and r.idempotency_key = ?`, [charge.id, idempotencyKey]);
    if (previous) {
      if (BigInt(previous.amount_cents) !== amountCents) throw idempotencyConflict();
      return refundView(previous);
    }
    if (charge.status !== 'PAID') throw new AppError(409, 'CHARGE_NOT_PAID', 'Only a paid charge can be refunded');
    const refundable = BigInt(charge.paid_cents) - BigInt(charge.refunded_cents);
    if (amountCents > refundable) throw new AppError(422, 'REFUND_EXCEEDS_PAID', `At most ${refundable} cents of this charge can still be refunded`);

    const settlementId = await settlementAccountId(tx, account.tenantId);
    const locked = await lockAccounts(tx, [account.id, settlementId]);
    const holder = locked.get(account.id)!;
    const refundId = newCuid();
    const at = new Date();
    const e2e = refundEndToEndId(at);
    const payer = charge.payer!;
    const common = {
      tenantId: account.tenantId,
      operationId: refundId,
      channel: 'PIX',
      status: 'DONE',
      statusExternal: 'SUCCESS',
      endToEndId: e2e,
      externalRef: null,
      payoutStatus: null,
      amountCents,
      feeCents: 0n,
    } as const;
    const movements: MovementInput[] = [
      {
        ...common,
        accountId: account.id,
        source: 'REVERSAL',
        direction: 'DEBIT',
        reversesMovementId: charge.movement_id,
        description: `Devolução de Pix para ${payer.name}`,
        // An outgoing Pix's statement metadata: this account pays, the charge's payer receives.
        metadata: {
          date: at.toISOString(),
          endToEndId: e2e,
          paymentDate: paymentDate(at),
          payer: { branch: holder.agency, account: holder.number },
          beneficiary: { ispb: payer.ispb, name: payer.name, branch: payer.branch, account: payer.account, document: payer.document, institution: payer.institution },
          originalEndToEndId: charge.end_to_end_id,
          txid: charge.txid,
          chargeId: charge.id,
        },
        lines: [{ kind: 'PRIMARY', amountCents: -amountCents }],
      },
      { ...common, accountId: settlementId, source: 'SETTLEMENT', direction: 'CREDIT', reversesMovementId: null, description: `Pix devolução ${e2e}`, metadata: {}, lines: [{ kind: 'PRIMARY', amountCents }] },
    ];
    const [debit] = await postMovements(tx, locked, movements).catch((err: unknown) => {
      if (err instanceof InsufficientBalance) throw new AppError(422, 'INSUFFICIENT_BALANCE', 'The account balance does not cover this refund');
      throw err;
    });
    const [refund] = await tx.execute<RefundRow[]>(
      `insert into pix_charge_refund as r (id, charge_id, amount_cents, refund_end_to_end_id, movement_id, idempotency_key, created_at)
       values (?, ?, ?, ?, ?, ?, ?) returning ${REFUND_COLUMNS}`,
      [refundId, charge.id, amountCents.toString(), e2e, debit!.id, idempotencyKey, at],
    );
    await tx.execute('update pix_charge set refunded_cents = refunded_cents + ? where id = ?', [amountCents.toString(), charge.id]);
    await enqueueEvents(tx, [
      {
        tenantId: account.tenantId,
        accountId: account.id,
        pixAccountId: account.pixAccountId,
        type: 'pix.charge.refunded',
        data: {
          tag: charge.tag,
          txid: charge.txid,
          chargeId: charge.id,
          movementId: debit!.id,
          endToEndId: charge.end_to_end_id,
          refundEndToEndId: e2e,
          amountCents: charge.amount_cents,
          occurredAt: at.toISOString(),
          refundAmountCents: amountCents.toString(),
        },
      },
    ]);
    return refundView(refund!);
  });
}
