import type { Account } from '../accounts/entities.ts';
import { authorizeWrite } from '../accounts/operating.ts';
import { holdForApproval, type Held } from '../approvals/service.ts';
import { confirmHandOff } from '../handoff/dispatch.ts';
import type { HandOff } from '../handoff/store.ts';
import type { HolderAuth } from '../identity/authenticator.ts';
import type { Services } from '../services.ts';
import { AppError, validationError } from '../shared/errors.ts';
import { idempotencyConflict } from '../shared/idempotency.ts';
import { startWithUpdate } from '../temporal/workflow-start.ts';
import { payoutOpened, pixPayoutStart, type PayoutOpening } from '../../workflows/contracts/pix-payout.ts';
import { amountToPay, parseBrCode, type BrCode } from './brcode.ts';
import { readScannedCharge, scannedChargeAmount } from './dynamic-qr.ts';
import { identifyPixKey, type PixKeyType } from './keys.ts';
import { findPayoutByKey } from './payout-store.ts';
import { openingOf, recordPayout, type PayoutRequest } from './payouts.ts';
import type { PixProvider } from './provider.ts';

/**
 * Paying with Pix, by key or by QR Code: one function per use case. Each finds the receiver, checks the PIN, then
 * either holds the payment for the account's approver or records it and has its settlement workflow debit it
 * (Update-with-Start), answering once the debit is decided.
 */

export interface PixPaymentContext {
  services: Services;
  provider: PixProvider;
}

/** The outcome of a payment request: debited (PROCESSING), accepted but not decided yet (PENDING), or held for approval. */
export type PaymentAnswer = { kind: 'debited'; payout: PayoutView } | { kind: 'pending'; payout: PayoutView } | { kind: 'held'; held: Held };

export interface PayoutView {
  payoutId: string;
  status: 'PROCESSING' | 'PENDING';
  amountCents: string;
  feeCents: string | null;
  createdAt: string;
}

interface Payer {
  auth: HolderAuth;
  /** The caller's own operating account (checked by the route). */
  account: Account;
  pin: string | undefined;
  idempotencyKey: string;
}

export interface KeyPayment extends Payer {
  amountCents: bigint;
  pixKey: string;
  pixKeyType: PixKeyType;
  description: string;
}

export interface QrCodePayment extends Payer {
  qrCode: string;
  /** Only for a code without amount; otherwise omitted or equal to the code's (the charge's, for a dynamic code). */
  amountCents: bigint | undefined;
}

type Payment = Omit<PayoutRequest, 'tenantId' | 'account' | 'idempotencyKey'>;

/** Pays a Pix key (channel PIX_OUT). */
export async function payPixKey(ctx: PixPaymentContext, r: KeyPayment): Promise<PaymentAnswer> {
  const beneficiary = await ctx.provider.resolveKey(r.pixKeyType, r.pixKey);
  if (!beneficiary) throw pixKeyNotFound();
  await authorizeWrite(r.auth, ctx.services.config, r.pin);
  return pay(ctx, r, { channel: 'PIX_OUT', amountCents: r.amountCents, pixKey: r.pixKey, pixKeyType: r.pixKeyType, beneficiary, qr: null, description: r.description });
}

/**
 * Pays a BR Code (channel QR_CODE_OUT). A static code names the key; a dynamic one names the location of a charge,
 * whose signed payload gives the key, the amount and the txid, and whose receiver gets the payment as that charge's.
 */
export async function payQrCode(ctx: PixPaymentContext, r: QrCodePayment): Promise<PaymentAnswer> {
  const code = parseBrCode(r.qrCode);
  if (code.url !== null) return payDynamicCode(ctx, r, { ...code, url: code.url });
  const amountCents = amountToPay(code, r.amountCents);
  const key = identifyPixKey(code.pixKey!);
  if (!key) throw validationError('Invalid Pix BR Code: field 26-01 is not a valid Pix key', [{ path: 'body.qrCode', message: 'the key is not a CPF, CNPJ, e-mail, phone or EVP key' }]);
  const beneficiary = await ctx.provider.resolveKey(key.pixKeyType, key.pixKey);
  if (!beneficiary) throw pixKeyNotFound();
  await authorizeWrite(r.auth, ctx.services.config, r.pin);
  return pay(ctx, r, {
    channel: 'QR_CODE_OUT',
    amountCents,
    ...key,
    beneficiary,
    qr: { txid: code.txid, merchantName: code.merchantName, merchantCity: code.merchantCity },
    description: qrDescription(code),
  });
}

async function payDynamicCode(ctx: PixPaymentContext, r: QrCodePayment, code: BrCode & { url: string }): Promise<PaymentAnswer> {
  // The PIN first: the platform fetches a code's location only for a holder allowed to pay.
  await authorizeWrite(r.auth, ctx.services.config, r.pin);
  // A retry must answer what the first request did, even though the charge it paid no longer reads as payable.
  const recorded = await findPayoutByKey(r.auth.em, r.account.id, r.idempotencyKey);
  if (recorded) {
    if (recorded.qr?.location !== code.url || (r.amountCents !== undefined && r.amountCents !== recorded.amountCents)) throw idempotencyConflict();
    return debit(ctx, r, { payoutId: recorded.id, opening: openingOf(recorded), handOff: null }, recorded.amountCents);
  }
  const charge = await readScannedCharge(ctx.provider, code, ctx.services.config.publicBaseUrl, new Date());
  const amountCents = scannedChargeAmount(charge, code, r.amountCents);
  const beneficiary = await ctx.provider.resolveChargeReceiver(charge);
  if (!beneficiary) throw pixKeyNotFound();
  return pay(ctx, r, {
    channel: 'QR_CODE_OUT',
    amountCents,
    pixKey: charge.pixKey,
    pixKeyType: charge.pixKeyType,
    beneficiary,
    qr: { txid: charge.txid, merchantName: code.merchantName, merchantCity: code.merchantCity, location: charge.location },
    description: qrDescription(code),
  });
}

const qrDescription = (code: BrCode) => `Pagamento QR Code ${code.merchantName}`;
const pixKeyNotFound = () => new AppError(422, 'PIX_KEY_NOT_FOUND', 'No account answers for this Pix key');

/**
 * Holds the payment for the account's approver, or records it and debits it in its settlement workflow
 * (Update-with-Start), answering once the debit is decided: REJECTED is 422 with its reason, nothing moved.
 */
async function pay(ctx: PixPaymentContext, r: Payer, payment: Payment): Promise<PaymentAnswer> {
  const { config } = ctx.services;
  const tenantId = r.auth.holder.tenantId;
  if (r.account.approverHolderId) {
    const held = { kind: 'PIX' as const, ...payment, amountCents: payment.amountCents.toString() };
    return { kind: 'held', held: await holdForApproval(ctx.services, { tenantId, source: r.account, requesterHolderId: r.auth.holder.id, idempotencyKey: r.idempotencyKey, payment: held }) };
  }
  const recorded = await recordPayout(r.auth.em, config.KEY_PEPPER, { ...payment, tenantId, account: r.account, idempotencyKey: r.idempotencyKey }, {
    taskQueue: config.TEMPORAL_TASK_QUEUE,
    start: (payoutId) => payoutStart(ctx, r, payoutId),
  });
  return debit(ctx, r, recorded, payment.amountCents);
}

const payoutStart = ({ services: { config } }: PixPaymentContext, r: Payer, payoutId: string) =>
  pixPayoutStart({ payoutId, tenantId: r.auth.holder.tenantId, accountId: r.account.id, pollMs: config.PIX_POLL_MS, refundWatchMs: config.PIX_REFUND_WATCH_MS });

/** A recorded payout whose debit is not decided yet is debited by its workflow now, within the response deadline. */
async function debit(ctx: PixPaymentContext, r: Payer, recorded: { payoutId: string; opening: PayoutOpening | null; handOff: HandOff | null }, amountCents: bigint): Promise<PaymentAnswer> {
  const { config, temporal } = ctx.services;
  const opening = recorded.opening ?? (await startWithUpdate(temporal.client, config.TEMPORAL_TASK_QUEUE, payoutStart(ctx, r, recorded.payoutId), payoutOpened, config.TEV_RESPONSE_DEADLINE_MS));
  // The debit was decided by the run: Temporal has it. Otherwise the hand-off's reconciler starts (or joins) it.
  if (opening && recorded.handOff) await confirmHandOff(r.auth.em, recorded.handOff);
  return answerOf(recorded.payoutId, amountCents, opening);
}

function answerOf(payoutId: string, amountCents: bigint, opening: PayoutOpening | null): PaymentAnswer {
  // Accepted, not debited yet: the workflow debits (or refuses) as soon as a worker runs it.
  if (!opening) return { kind: 'pending', payout: { payoutId, status: 'PENDING', amountCents: amountCents.toString(), feeCents: null, createdAt: new Date().toISOString() } };
  if (opening.status === 'REJECTED') {
    throw new AppError(422, opening.reason ?? 'REJECTED', opening.reason === 'INSUFFICIENT_BALANCE' ? 'The balance does not cover the amount and the fee' : 'The account cannot send Pix');
  }
  const { status, amountCents: amount, feeCents, createdAt } = opening;
  return { kind: 'debited', payout: { payoutId: opening.payoutId, status, amountCents: amount, feeCents, createdAt } };
}
