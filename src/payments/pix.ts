import type { EntityManager } from '@mikro-orm/postgresql';
import type { Held } from '../approvals/service.ts';
import { isTrustedReceiver } from '../contacts/receiver.ts';
import { handOffUncertain } from '../handoff/dispatch.ts';
import type { HolderAuth } from '../identity/authenticator.ts';
import { payingAccount, type AccountStanding } from '../identity/operating-account.ts';
import { checkPin } from '../identity/pin.ts';
import { definitelyRefused } from '../persistence/database-errors.ts';
import { amountToPay, parseBrCode, type BrCode } from '../pix/brcode.ts';
import { readScannedCharge, scannedChargeAmount } from '../pix/dynamic-qr.ts';
import { identifyPixKey, type PixKeyType } from '../pix/keys.ts';
import { outcomeOf, type DebitOutcome, type PayoutOutcome } from '../pix/payout-debits.ts';
import type { Beneficiary } from '../pix/provider.ts';
import { payoutDebitOf, payoutTiming, retriedQrPayout, type PayoutRequest } from '../pix/payouts.ts';
import { DomainError, isRefusal, REFUSALS, refusals, validationError, type LimitBreach, type LimitDetail } from '../shared/errors.ts';
import { within } from '../shared/time.ts';
import { pixPayoutStart, type PixPayoutInput } from '../../workflows/contracts/pix-payout.ts';
import type { PaymentContext } from './context.ts';
import type { HeldPayment } from './held-payment.ts';
import { payOrHold } from './hold.ts';

/**
 * Paying with Pix, by key or by QR Code: one function per use case. Each finds the receiver, checks the PIN, then
 * debits the payment in the request, handing its settlement to its workflow in the same transaction, or, when the
 * debit finds the account under dual approval, holds it for the account's approver.
 */

/** The outcome of a payment request: debited (PROCESSING), accepted but not decided yet (PENDING), or held for approval. */
export type PaymentAnswer = { kind: 'debited'; payout: PayoutView } | { kind: 'pending'; payout: PayoutView } | { kind: 'held'; held: Held };

export interface PayoutView {
  payoutId: string;
  status: 'PROCESSING' | 'PENDING';
  amountCents: string;
  feeCents: string | null;
  createdAt: string;
  /** The receiver is a trusted contact of the paying account (exempt from its night limit); null while not known (PENDING). */
  trustedContact: boolean | null;
}

interface HolderPayer {
  auth: HolderAuth;
  /** The caller's own account, checked here (`payingAccount`). */
  accountId: string;
  pin: string | undefined;
  idempotencyKey: string;
}

/** Who pays, once the PIN is checked: the account, the holder who asked (an approval's requester), the unit of work. */
interface Payer {
  em: EntityManager;
  tenantId: string;
  requesterHolderId: string;
  account: AccountStanding;
  idempotencyKey: string;
}

const payerOf = (request: HolderPayer, account: AccountStanding): Payer => ({
  em: request.auth.em,
  tenantId: request.auth.holder.tenantId,
  requesterHolderId: request.auth.holder.id,
  account,
  idempotencyKey: request.idempotencyKey,
});

/**
 * The payer's operating account and the key's owner in the directory, read side by side: a payment by key waits for
 * both, and the directory is a network round trip. The account's refusal comes first, as if it had been read first;
 * the directory's answer is then dropped (asking it moved nothing).
 */
async function accountAndReceiver(ctx: PaymentContext, request: KeyPayment): Promise<{ account: AccountStanding; beneficiary: Beneficiary }> {
  const lookup = ctx.pixProvider.resolveKey(request.pixKeyType, request.pixKey);
  lookup.catch(() => undefined);
  const account = await payingAccount(request.auth, request.accountId);
  const beneficiary = await lookup;
  if (!beneficiary) throw new DomainError('PIX_KEY_NOT_FOUND');
  return { account, beneficiary };
}

export interface KeyPayment extends HolderPayer {
  amountCents: bigint;
  pixKey: string;
  pixKeyType: PixKeyType;
  description: string;
}

export interface QrCodePayment extends HolderPayer {
  qrCode: string;
  /** Only for a code without amount; otherwise omitted or equal to the code's (the charge's, for a dynamic code). */
  amountCents: bigint | undefined;
}

type Payment = Omit<PayoutRequest, 'tenantId' | 'account' | 'idempotencyKey'>;

/** Pays a Pix key (channel PIX_OUT). */
export async function payPixKey(ctx: PaymentContext, request: KeyPayment): Promise<PaymentAnswer> {
  const { account, beneficiary } = await accountAndReceiver(ctx, request);
  await checkPin(request.auth, ctx.config, request.pin);
  return pay(ctx, payerOf(request, account), { channel: 'PIX_OUT', amountCents: request.amountCents, pixKey: request.pixKey, pixKeyType: request.pixKeyType, beneficiary, qr: null, description: request.description });
}

/** A payment to a Pix key that its holder authorized earlier (a scheduled payment's occurrence, PIN given when scheduled). */
export interface AuthorizedKeyPayment extends Payer {
  amountCents: bigint;
  pixKey: string;
  pixKeyType: PixKeyType;
  description: string;
}

/**
 * Pays a Pix key as `payPixKey` does, without asking for the PIN again: the key resolved now (its owner when the money
 * moves), then held for the account's approver, or debited with its settlement handed off.
 */
export async function payAuthorizedPixKey(ctx: PaymentContext, request: AuthorizedKeyPayment): Promise<PaymentAnswer> {
  const beneficiary = await ctx.pixProvider.resolveKey(request.pixKeyType, request.pixKey);
  if (!beneficiary) throw new DomainError('PIX_KEY_NOT_FOUND');
  return pay(ctx, request, { channel: 'PIX_OUT', amountCents: request.amountCents, pixKey: request.pixKey, pixKeyType: request.pixKeyType, beneficiary, qr: null, description: request.description });
}

/**
 * Pays a BR Code (channel QR_CODE_OUT). A static code names the key; a dynamic one names the location of a charge,
 * whose signed payload gives the key, the amount and the txid, and whose receiver gets the payment as that charge's.
 */
export async function payQrCode(ctx: PaymentContext, request: QrCodePayment): Promise<PaymentAnswer> {
  // The account before the code: a payer that may not pay learns that first, whatever it scanned.
  const account = await payingAccount(request.auth, request.accountId);
  const code = parseBrCode(request.qrCode);
  if (code.url !== null) return payDynamicCode(ctx, request, account, { ...code, url: code.url });
  const amountCents = amountToPay(code, request.amountCents);
  const key = identifyPixKey(code.pixKey!);
  if (!key) throw validationError('Invalid Pix BR Code: field 26-01 is not a valid Pix key', [{ path: 'body.qrCode', message: 'the key is not a CPF, CNPJ, e-mail, phone or EVP key' }]);
  const beneficiary = await ctx.pixProvider.resolveKey(key.pixKeyType, key.pixKey);
  if (!beneficiary) throw new DomainError('PIX_KEY_NOT_FOUND');
  await checkPin(request.auth, ctx.config, request.pin);
  return pay(ctx, payerOf(request, account), {
    channel: 'QR_CODE_OUT',
    amountCents,
    ...key,
    beneficiary,
    qr: { txid: code.txid, merchantName: code.merchantName, merchantCity: code.merchantCity },
    description: qrDescription(code),
  });
}

async function payDynamicCode(ctx: PaymentContext, request: QrCodePayment, account: AccountStanding, code: BrCode & { url: string }): Promise<PaymentAnswer> {
  // The PIN first: the platform fetches a code's location only for a holder allowed to pay.
  await checkPin(request.auth, ctx.config, request.pin);
  // A retry must answer what the first request did, even though the charge it paid no longer reads as payable.
  const retried = await retriedQrPayout(request.auth.em, account.id, request.idempotencyKey, code.url, request.amountCents);
  if (retried) return answerOf({ ...retried.outcome, trustedContact: await isTrustedReceiver(request.auth.em, account.id, retried.receiver) });
  const charge = await readScannedCharge(ctx.pixProvider, code, ctx.config.publicBaseUrl, new Date());
  const amountCents = scannedChargeAmount(charge, code, request.amountCents);
  const beneficiary = await ctx.pixProvider.resolveChargeReceiver(charge);
  if (!beneficiary) throw new DomainError('PIX_KEY_NOT_FOUND');
  return pay(ctx, payerOf(request, account), {
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

/**
 * Debits the payment in one transaction that also hands its settlement to its workflow: 201 PROCESSING, or 422 with
 * the reason and nothing moved; or, when the debit finds the account under dual approval (nothing written), holds it
 * for the approver. No Temporal call is on this path. When the outcome is not known in time (a lost connection, the
 * deadline), the answer is 202 PENDING and the settlement workflow, handed the request, debits it (idempotently) or
 * finds it debited.
 */
async function pay(ctx: PaymentContext, payer: Payer, payment: Payment): Promise<PaymentAnswer> {
  const { tenantId, requesterHolderId, idempotencyKey } = payer;
  const paid = await payOrHold<PaymentAnswer>(ctx, { tenantId, accountId: payer.account.id, requesterHolderId, idempotencyKey }, async () => {
    const debited = await debitInRequest(ctx, payer, payment);
    if (debited.kind !== 'approval_required') return { answer: answerOf(debited) };
    const toHold: HeldPayment = { kind: 'PIX', ...payment, amountCents: payment.amountCents.toString() };
    return { toHold };
  });
  return 'held' in paid ? { kind: 'held', held: paid.held } : paid.answer;
}

/** The debit through the request path's queue, with its settlement's hand-off; PENDING when its outcome is not known in time. */
async function debitInRequest(ctx: PaymentContext, payer: Payer, payment: Payment): Promise<DebitOutcome> {
  const { config, logger, orm, temporal } = ctx;
  const { tenantId } = payer;
  const debit = payoutDebitOf(config.KEY_PEPPER, { ...payment, tenantId, account: payer.account, idempotencyKey: payer.idempotencyKey });
  const start = pixPayoutStart({ payoutId: debit.payoutId, tenantId, accountId: payer.account.id, timing: payoutTiming(config) });
  try {
    return await within(ctx.pixDebits.debit({ debit, approval: 'ASK', handOff: { taskQueue: config.TEMPORAL_TASK_QUEUE, start } }), config.TEV_RESPONSE_DEADLINE_MS);
  } catch (err) {
    if (isRefusal(err)) throw err;
    if (definitelyRefused(err)) {
      logger.error({ err, payoutId: debit.payoutId }, 'Pix debit refused by the debit function; nothing was written');
      throw new DomainError('PAYMENT_NOT_DEBITED');
    }
    logger.warn({ err, payoutId: debit.payoutId }, 'Pix debit outcome unknown; handing the request to its settlement workflow');
    handOffUncertain(temporal.client, orm, config.TEMPORAL_TASK_QUEUE, { ...start, args: [{ ...(start.args[0] as PixPayoutInput), debit }] }, logger);
    // Not known either whether the receiver is trusted: the debit that answers it may not have run.
    return { kind: 'pending', payoutId: debit.payoutId, amountCents: debit.amountCents, trustedContact: null };
  }
}

/** Why `debit_pix_payout` rejects a payment (nothing moved), each the name of its refusal in the catalog. */
const DEBIT_REJECTIONS = refusals('INSUFFICIENT_BALANCE', 'SOURCE_NOT_ACTIVE', 'LIMIT_EXCEEDED');

function answerOf(debited: PayoutOutcome): PaymentAnswer {
  const { trustedContact } = debited;
  // Accepted, not debited yet: the workflow debits (or refuses) as soon as a worker runs it.
  if (debited.kind === 'pending') {
    return {
      kind: 'pending',
      payout: { payoutId: debited.payoutId, status: 'PENDING', amountCents: debited.amountCents, feeCents: null, createdAt: new Date().toISOString(), trustedContact },
    };
  }
  const opening = debited.opening;
  if (opening.status === 'REJECTED') {
    const rejection = DEBIT_REJECTIONS.find((refusal) => refusal === opening.reason);
    if (!rejection) throw new Error(`debit_pix_payout rejected payout ${opening.payoutId} for a reason it does not give: ${opening.reason}`);
    if (rejection === 'LIMIT_EXCEEDED') throw limitExceeded(opening.payoutId, debited.limitBreach);
    throw new DomainError(rejection);
  }
  const { payoutId, status, amountCents, feeCents, createdAt } = opening;
  return { kind: 'debited', payout: { payoutId, status, amountCents, feeCents, createdAt, trustedContact } };
}
answerOf.raises = DEBIT_REJECTIONS;

/** LIMIT_EXCEEDED, its details naming the limit the amount breaks. */
function limitExceeded(payoutId: string, breach: LimitBreach | null): DomainError<'LIMIT_EXCEEDED'> {
  if (!breach) throw new Error(`debit_pix_payout rejected payout ${payoutId} with LIMIT_EXCEEDED without naming the limit`);
  const detail: LimitDetail = { path: 'body.amount', message: REFUSALS.LIMIT_EXCEEDED.message(breach), ...breach };
  return new DomainError('LIMIT_EXCEEDED', breach, [detail]);
}

// Declared last: they name the steps above. The debit answers through outcomeOf (the queue's and the direct call's alike).
debitInRequest.raises = refusals(outcomeOf, 'PAYMENT_NOT_DEBITED');
pay.raises = refusals(payOrHold, debitInRequest, answerOf);
accountAndReceiver.raises = refusals(payingAccount, 'PIX_KEY_NOT_FOUND', 'PIX_PROVIDER_UNAVAILABLE');
payPixKey.raises = refusals(accountAndReceiver, checkPin, pay);
payAuthorizedPixKey.raises = refusals(pay, 'PIX_KEY_NOT_FOUND', 'PIX_PROVIDER_UNAVAILABLE');
payDynamicCode.raises = refusals(checkPin, retriedQrPayout, answerOf, readScannedCharge, scannedChargeAmount, pay, 'PIX_KEY_NOT_FOUND', 'PIX_PROVIDER_UNAVAILABLE');
payQrCode.raises = refusals(payingAccount, checkPin, pay, 'PIX_KEY_NOT_FOUND', 'PIX_PROVIDER_UNAVAILABLE', payDynamicCode);
