import type { EntityManager } from '@mikro-orm/postgresql';
import { enqueueEvents } from '../events/outbox.ts';
import { DomainError, refusals } from '../shared/errors.ts';
import { pixEndToEndId } from './end-to-end.ts';
import { callCreditIncomingPix, type CreditRow } from './pix-postings.ts';

export interface IncomingPix {
  tenantId: string;
  accountId: string;
  amountCents: bigint;
  endToEndId?: string;
  payer: { name: string; document: string; ispb: string; institution: string; branch: string; account: string };
}

export interface ReceivedPix {
  movementId: string;
  endToEndId: string;
  amountCents: string;
  feeCents: string;
  balanceAfterCents: string;
}

export interface Credited {
  movementId: string;
  balanceAfterCents: bigint;
  account: { id: string; pixAccountId: string; coreAccountId: string };
  endToEndId: string;
  fee: bigint;
  at: Date;
  paymentDate: string;
}

/**
 * `credit_incoming_pix` refuses under the names of the catalog, but for its ACCOUNT_NOT_APPROVED: an account that
 * cannot receive yet, a refusal of its own (the operating rule's ACCOUNT_NOT_APPROVED is another).
 */
const refusalOf = (code: Exclude<CreditRow['code'], 'CREDITED'>) => (code === 'ACCOUNT_NOT_APPROVED' ? 'RECEIVER_NOT_APPROVED' : code);

/**
 * The posting of any incoming Pix, in the caller's transaction (`credit_incoming_pix`, src/ledger/sql/): the amount
 * from the settlement account, the receive fee to the tenant's revenue, one statement transaction (PIX, credit, payer
 * metadata plus `extraMetadata`). Without an end-to-end id from the payer's institution, one is made for its ISPB.
 */
export async function creditIncomingPix(
  tx: EntityManager,
  pix: IncomingPix & { description: string; extraMetadata?: Record<string, unknown> },
): Promise<Credited> {
  const endToEndId = pix.endToEndId ?? pixEndToEndId(pix.payer.ispb);
  const row = await callCreditIncomingPix(tx, {
    tenantId: pix.tenantId,
    accountId: pix.accountId,
    amountCents: pix.amountCents,
    endToEndId,
    description: pix.description,
    payer: pix.payer,
    extraMetadata: pix.extraMetadata ?? {},
  });
  if (row.code !== 'CREDITED') throw new DomainError(refusalOf(row.code));
  return {
    movementId: row.movement_id,
    balanceAfterCents: BigInt(row.balance_after_cents),
    account: { id: pix.accountId, pixAccountId: row.pix_account_id, coreAccountId: row.core_account_id },
    endToEndId,
    fee: BigInt(row.fee_cents),
    at: new Date(row.credited_at),
    paymentDate: row.payment_date,
  };
}
creditIncomingPix.raises = refusals('ACCOUNT_NOT_FOUND', 'RECEIVER_NOT_APPROVED', 'ACCOUNT_NOT_ACTIVE', 'AMOUNT_BELOW_RECEIVE_FEE');

/** Credits an incoming Pix and writes `pix.in.received`, in one transaction. */
export async function receivePix(em: EntityManager, pix: IncomingPix): Promise<ReceivedPix> {
  return em.transactional(async (tx) => {
    const { movementId, balanceAfterCents, account, endToEndId, fee, at, paymentDate: paid } = await creditIncomingPix(tx, { ...pix, description: `Pix recebido de ${pix.payer.name}` });
    await enqueueEvents(tx, [
      {
        tenantId: pix.tenantId,
        accountId: account.id,
        pixAccountId: account.pixAccountId,
        type: 'pix.in.received',
        data: {
          payerName: pix.payer.name,
          endToEndId,
          movementId,
          receivedAt: at.toISOString(),
          amountCents: pix.amountCents.toString(),
          payerBranch: pix.payer.branch,
          paymentDate: paid,
          payerAccount: pix.payer.account,
          pixAccountId: account.pixAccountId,
          coreAccountId: account.coreAccountId,
          payerDocument: pix.payer.document,
          payerInstitution: pix.payer.institution,
        },
      },
    ]);
    return { movementId, endToEndId, amountCents: pix.amountCents.toString(), feeCents: fee.toString(), balanceAfterCents: balanceAfterCents.toString() };
  });
}
receivePix.raises = refusals(creditIncomingPix);
