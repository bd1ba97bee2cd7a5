import type { EntityManager } from '@mikro-orm/postgresql';
import { Account } from '../accounts/entities.ts';
import { enqueueEvents } from '../events/outbox.ts';
import { feesFor } from '../fees/service.ts';
import { feeRevenueAccountId, lockAccounts, postMovements, settlementAccountId, type LockedAccount, type MovementInput, type PostedMovement } from '../ledger/posting.ts';
import { AppError, notFound } from '../shared/errors.ts';
import { paymentDate } from '../shared/time.ts';
import { pixEndToEndId } from './end-to-end.ts';

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
  credit: PostedMovement;
  account: LockedAccount & { coreAccountId: string };
  endToEndId: string;
  fee: bigint;
  at: Date;
  paymentDate: string;
}

/**
 * The posting of any incoming Pix, in the caller's transaction: the amount from the settlement account, the receive
 * fee to the tenant's revenue, one statement transaction (PIX, credit, payer metadata plus `extraMetadata`).
 */
export async function creditIncomingPix(
  tx: EntityManager,
  pix: IncomingPix & { description: string; extraMetadata?: Record<string, unknown> },
): Promise<Credited> {
  const target = await tx.findOne(Account, { id: pix.accountId, tenantId: pix.tenantId, kind: 'HOLDER' });
  if (!target) throw notFound('Account');
  const fee = (await feesFor(tx, [target.id])).get(target.id)!.pixIn;
  const settlementId = await settlementAccountId(tx, pix.tenantId);
  const revenueId = fee > 0n ? await feeRevenueAccountId(tx, pix.tenantId) : null;
  const locked = await lockAccounts(tx, [target.id, settlementId, ...(revenueId ? [revenueId] : [])]);
  const account = locked.get(target.id)!;
  if (account.status !== 'APPROVED') throw new AppError(422, 'ACCOUNT_NOT_APPROVED', 'The account cannot receive money before KYC approval');
  if (fee >= pix.amountCents) throw new AppError(422, 'AMOUNT_BELOW_RECEIVE_FEE', 'The amount does not cover the receive fee');

  const at = new Date();
  const endToEndId = pix.endToEndId ?? pixEndToEndId(pix.payer.ispb, at);
  const common = {
    tenantId: pix.tenantId,
    operationId: endToEndId,
    channel: 'PIX',
    status: 'DONE',
    statusExternal: 'SUCCESS',
    endToEndId,
    externalRef: null,
    reversesMovementId: null,
    payoutStatus: null,
  } as const;
  const metadata = {
    date: at.toISOString(),
    endToEndId,
    paymentDate: paymentDate(at),
    payer: { ispb: pix.payer.ispb, name: pix.payer.name, branch: pix.payer.branch, account: pix.payer.account, document: pix.payer.document, institution: pix.payer.institution },
    beneficiary: { branch: account.agency, account: account.number },
    ...pix.extraMetadata,
  };
  const movements: MovementInput[] = [
    {
      ...common,
      accountId: target.id,
      source: 'PIX_IN',
      direction: 'CREDIT',
      amountCents: pix.amountCents,
      feeCents: fee,
      description: pix.description,
      metadata,
      lines: [{ kind: 'PRIMARY', amountCents: pix.amountCents }, ...(fee > 0n ? [{ kind: 'FEE' as const, amountCents: -fee }] : [])],
    },
    { ...common, accountId: settlementId, source: 'SETTLEMENT', direction: 'DEBIT', amountCents: pix.amountCents, feeCents: 0n, description: `Pix in ${endToEndId}`, metadata: {}, lines: [{ kind: 'PRIMARY', amountCents: -pix.amountCents }] },
  ];
  if (revenueId) {
    movements.push({ ...common, accountId: revenueId, source: 'FEE_REVENUE', direction: 'CREDIT', amountCents: fee, feeCents: 0n, description: `Tarifa Pix ${endToEndId}`, metadata: {}, lines: [{ kind: 'FEE', amountCents: fee }] });
  }
  const [credit] = await postMovements(tx, locked, movements);
  return { credit: credit!, account: { ...account, coreAccountId: target.coreAccountId }, endToEndId, fee, at, paymentDate: metadata.paymentDate };
}

/** Credits an incoming Pix and writes `pix.in.received`, in one transaction. */
export async function receivePix(em: EntityManager, pix: IncomingPix): Promise<ReceivedPix> {
  return em.transactional(async (tx) => {
    const { credit, account, endToEndId, fee, at, paymentDate: paid } = await creditIncomingPix(tx, { ...pix, description: `Pix recebido de ${pix.payer.name}` });
    await enqueueEvents(tx, [
      {
        tenantId: pix.tenantId,
        accountId: account.id,
        pixAccountId: account.pixAccountId,
        type: 'pix.in.received',
        data: {
          payerName: pix.payer.name,
          endToEndId,
          movementId: credit.id,
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
    return { movementId: credit.id, endToEndId, amountCents: pix.amountCents.toString(), feeCents: fee.toString(), balanceAfterCents: credit.balanceAfterCents.toString() };
  });
}
