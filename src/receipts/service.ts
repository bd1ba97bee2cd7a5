import type { EntityManager } from '@mikro-orm/postgresql';
import type { Account } from '../accounts/entities.ts';
import type { Holder } from '../identity/entities.ts';
import { findAccountMovement, findMovement, findReturnsOf, type MovementRow } from '../ledger/store.ts';
import { findPayout } from '../pix/payout-store.ts';
import { documentShownToPayer } from '../shared/documents.ts';
import { DomainError, notFound, refusals } from '../shared/errors.ts';
import { PLATFORM_ISPB } from '../shared/institution.ts';
import { centsToReais } from '../shared/money.ts';
import { paymentDate } from '../shared/time.ts';
import { brandOf } from '../tenants/service.ts';
import { tevSentBy } from '../transfers/visibility.ts';
import { authenticationCode, codeMatches, normalizeCode } from './authentication-code.ts';
import { findReceipt, recordReceipt } from './store.ts';

export type ReceiptKind = 'PIX_SENT' | 'PIX_STATIC_QR_SENT' | 'PIX_DYNAMIC_QR_SENT' | 'TEV_SENT' | 'TEV_RECEIVED' | 'PIX_RECEIVED' | 'PIX_CHARGE_RECEIVED';

export interface ReceiptParty {
  name: string | null;
  /** CPF masked as banks show it (`***.456.789-**`), CNPJ whole; null when the movement does not name one. */
  document: string | null;
  institution: string | null;
  ispb: string | null;
  branch: string | null;
  account: string | null;
}

/** What a receipt certifies: every field its authentication code covers, and nothing the receipt does not show. */
export interface ReceiptFields {
  kind: ReceiptKind;
  /** RETURNED: the payment reached its receiver and was returned to the payer since (in part or in whole). */
  status: 'COMPLETED' | 'RETURNED';
  issuer: string;
  amount: number;
  fee: number;
  returnedAmount: number | null;
  /** Brasília time, `YYYY-MM-DD HH:mm:ss-03:00`: when the payment was settled. */
  dateTime: string;
  payer: ReceiptParty;
  receiver: ReceiptParty;
  description: string;
  endToEndId: string | null;
  transactionId: string;
  payoutId: string | null;
}

export type Receipt = ReceiptFields & { authenticationCode: string };

const OUTGOING = new Set(['TEF_OUT', 'PIX_OUT', 'QR_CODE_OUT']);
const text = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);

function party(meta: unknown): ReceiptParty {
  const p = (meta ?? {}) as Record<string, unknown>;
  const document = text(p.document);
  return {
    name: text(p.name),
    document: document === null ? null : documentShownToPayer(document),
    institution: text(p.institution),
    ispb: text(p.ispb),
    branch: text(p.branch),
    account: text(p.account),
  };
}

/** The account's own side: its holder, at this platform under the tenant's brand. */
const ownSide = (holder: Holder, account: Account, issuer: string): ReceiptParty => ({
  name: holder.name,
  document: documentShownToPayer(holder.document),
  institution: issuer,
  ispb: PLATFORM_ISPB,
  branch: account.agency,
  account: account.number,
});

/** Final and successful, or the 409 naming where the movement stands. */
function statusOf(m: MovementRow): ReceiptFields['status'] {
  if (OUTGOING.has(m.source)) {
    if (m.payout_status === 'POSTED') return 'COMPLETED';
    if (m.payout_status === 'REFUNDED') return 'RETURNED';
    throw new DomainError('RECEIPT_NOT_AVAILABLE', { state: m.payout_status ?? m.status });
  }
  if ((m.source === 'TEF_IN' || m.source === 'PIX_IN') && m.status === 'DONE') return 'COMPLETED';
  throw new DomainError('RECEIPT_NOT_AVAILABLE', { state: m.source === 'TEF_IN' || m.source === 'PIX_IN' ? m.status : m.source });
}

async function kindOf(em: EntityManager, m: MovementRow): Promise<ReceiptKind> {
  switch (m.source) {
    case 'TEF_OUT':
      return 'TEV_SENT';
    case 'TEF_IN':
      return 'TEV_RECEIVED';
    case 'PIX_IN':
      return m.metadata.chargeId ? 'PIX_CHARGE_RECEIVED' : 'PIX_RECEIVED';
    case 'QR_CODE_OUT':
      // A dynamic BR Code names its charge's location; a static one carries everything itself.
      return (await findPayout(em, m.operation_id))?.qr?.location ? 'PIX_DYNAMIC_QR_SENT' : 'PIX_STATIC_QR_SENT';
    default:
      return 'PIX_SENT';
  }
}

async function returnedCents(em: EntityManager, m: MovementRow): Promise<bigint> {
  let total = 0n;
  for (const id of await findReturnsOf(em, m.id)) total += BigInt((await findMovement(em, id))!.amount_cents);
  return total;
}

/**
 * The receipt of one of the account's movements: its certified fields and their authentication code, recorded so that
 * the code verifies later (verifyReceipt).
 */
async function receiptOf(em: EntityManager, pepperKey: Buffer, holder: Holder, account: Account, m: MovementRow, payoutId: string | null): Promise<Receipt> {
  const status = statusOf(m);
  const issuer = (await brandOf(em, account.tenantId)).name;
  const outgoing = OUTGOING.has(m.source);
  const own = ownSide(holder, account, issuer);
  const counterpart = party(outgoing ? m.metadata.beneficiary : m.metadata.payer);
  // A TEV stays within the tenant: its other side is an account of the same institution, which its metadata leaves unnamed.
  if (m.channel === 'TEF') counterpart.institution ??= issuer;
  const fields: ReceiptFields = {
    kind: await kindOf(em, m),
    status,
    issuer,
    amount: centsToReais(BigInt(m.amount_cents)),
    fee: centsToReais(BigInt(m.fee_cents)),
    returnedAmount: status === 'RETURNED' ? centsToReais(await returnedCents(em, m)) : null,
    dateTime: text(m.metadata.paymentDate) ?? paymentDate(new Date(m.created_at)),
    payer: outgoing ? own : counterpart,
    receiver: outgoing ? counterpart : own,
    description: m.description,
    endToEndId: m.end_to_end_id,
    transactionId: m.statement_id,
    payoutId,
  };
  const code = authenticationCode(pepperKey, account.tenantId, fields);
  await recordReceipt(em, { code, tenantId: account.tenantId, accountId: account.id, movementId: m.id, fields });
  return { ...fields, authenticationCode: code };
}

/** A payment the account sent, by its payoutId (a TEV by its tevId): its receipt, 409 while not final, 404 for anyone else. */
export async function payoutReceipt(em: EntityManager, pepperKey: Buffer, holder: Holder, account: Account, payoutId: string): Promise<Receipt> {
  const tev = await tevSentBy(em, account, payoutId);
  if (tev) {
    if (!tev.sourceMovementId) throw new DomainError('RECEIPT_NOT_AVAILABLE', { state: tev.status === 'FAILED' ? 'FAILED' : 'PROCESSING' });
    return receiptOf(em, pepperKey, holder, account, (await findMovement(em, tev.sourceMovementId))!, tev.id);
  }
  const payout = await findPayout(em, payoutId);
  if (payout?.accountId !== account.id) throw notFound('Payout');
  if (!payout.movementId) throw new DomainError('RECEIPT_NOT_AVAILABLE', { state: payout.state === 'REQUESTED' ? 'PENDING' : 'FAILED' });
  return receiptOf(em, pepperKey, holder, account, (await findMovement(em, payout.movementId))!, payout.id);
}
payoutReceipt.raises = refusals('NOT_FOUND', 'RECEIPT_NOT_AVAILABLE');

/** Any movement of the account by its statement id: a payment sent or received (a TEV's credit, a Pix, a paid charge). */
export async function transactionReceipt(em: EntityManager, pepperKey: Buffer, holder: Holder, account: Account, transactionId: string): Promise<Receipt> {
  const m = await findAccountMovement(em, account.id, transactionId);
  if (!m) throw notFound('Transaction');
  return receiptOf(em, pepperKey, holder, account, m, OUTGOING.has(m.source) ? m.operation_id : null);
}
transactionReceipt.raises = refusals('NOT_FOUND', 'RECEIPT_NOT_AVAILABLE');

/**
 * The public verification: whether a code typed back is genuine, and then the fields it certifies, exactly as the
 * receipt showed them. A code never issued, or whose recorded fields no longer give it, is not genuine.
 */
export async function verifyReceipt(em: EntityManager, pepperKey: Buffer, typed: string): Promise<{ genuine: false } | { genuine: true; receipt: Receipt }> {
  const code = normalizeCode(typed);
  const row = code === null ? null : await findReceipt(em, code);
  if (!row || !codeMatches(pepperKey, row.tenant_id, row.fields, row.code)) return { genuine: false };
  return { genuine: true, receipt: { ...(row.fields as unknown as ReceiptFields), authenticationCode: row.code } };
}
