/**
 * The two kinds of failure that are not business outcomes. A use case raises a `DomainError`: which rule of the catalog
 * below refused, with the facts of the case; its code and message are the catalog's, never retyped, and it carries no
 * HTTP status: the table of src/http/error-codes.ts gives each refusal its status. An `AppError` is an answer fixed
 * where it is raised: a refused input (400 VALIDATION_ERROR, its `details` naming the request's paths) and the HTTP
 * layer's own answers.
 */
export interface ErrorDetail {
  path: string;
  message: string;
}

/** A debit's limit: its channel and period, as LIMIT_EXCEEDED names them. */
export type LimitChannel = 'PIX' | 'TEV';
export type LimitPeriod = 'TRANSACTION' | 'DAY' | 'NIGHT' | 'MONTH';

/** A limit a debit breaks, as `check_and_count_limits` (src/ledger/sql/posting.sql) answers it: its value and what remained, in cents. */
export interface LimitBreach {
  channel: LimitChannel;
  period: LimitPeriod;
  limitCents: string;
  remainingCents: string;
}

/** LIMIT_EXCEEDED's detail: the refused amount's path, and the limit it breaks. */
export type LimitDetail = ErrorDetail & LimitBreach;

export class AppError extends Error {
  readonly status: number;
  readonly code: string;
  readonly details: ErrorDetail[] | undefined;

  constructor(status: number, code: string, message: string, details?: ErrorDetail[]) {
    super(message);
    this.name = 'AppError';
    this.status = status;
    this.code = code;
    this.details = details;
  }

  toBody(): { code: string; message: string; details?: ErrorDetail[] } {
    return this.details ? { code: this.code, message: this.message, details: this.details } : { code: this.code, message: this.message };
  }
}

export const validationError = (message: string, details?: ErrorDetail[]) => new AppError(400, 'VALIDATION_ERROR', message, details);

/** Why a credential is refused; every reason is the same 401 UNAUTHORIZED, with its own message. */
const UNAUTHORIZED_MESSAGES = {
  BEARER_MISSING: 'Missing Authorization: Bearer <token>',
  TOKEN_EXPIRED: 'Token expired; authenticate again',
  TOKEN_INVALID: 'Invalid token; authenticate again',
  TOKEN_OF_ANOTHER_TENANT: 'The token was not issued for this tenant',
  ISSUING_KEY_REVOKED: 'The tenant API key that issued this token was revoked; authenticate again',
  HOLDER_UNKNOWN: 'Invalid or expired credentials; authenticate again',
  TENANT_KEY_MISSING: 'Missing or malformed X-Tenant-Api-Key',
  TENANT_KEY_INVALID: 'Invalid, revoked or foreign tenant API key',
  API_KEY_MISSING: 'Missing or malformed API key: send Authorization: Bearer pak_<prefix>.<secret>',
  API_KEY_INVALID: 'Invalid or revoked API key',
} as const;

export type UnauthorizedReason = keyof typeof UNAUTHORIZED_MESSAGES;

const notFoundMessage = (what: string) => `${what} not found`;

/** One refusal: the `code` a caller is given when it is not the refusal's own name, and its message. */
interface RefusalEntry {
  readonly code?: string;
  /** A text, or the text made of the facts of the case (the message function's one parameter). */
  readonly message: string | ((facts: never) => string);
}

/**
 * The catalog of refusals: every rule a use case can refuse by, with what a caller reads of it. Most answer under
 * their own name; where two rules answer one code, each has its own name here and names that code (an account that
 * cannot receive yet is 422 ACCOUNT_NOT_APPROVED, one that cannot operate is 403 ACCOUNT_NOT_APPROVED). A SQL posting
 * function refuses under these names, raised as they come. A new refusal is an entry here and its status in
 * src/http/error-codes.ts, which the compiler asks for.
 */
export const REFUSALS = {
  // Tenants, holders and their credentials
  UNKNOWN_TENANT: { message: 'X-Tenant-Id does not name a tenant' },
  EMAIL_TAKEN: { message: 'A holder with this email already exists in this tenant' },
  DOCUMENT_TAKEN: { message: 'A holder with this document already exists in this tenant' },
  UNAUTHORIZED: { message: ({ reason }: { reason: UnauthorizedReason }) => UNAUTHORIZED_MESSAGES[reason] },
  INVALID_CREDENTIALS: { message: 'Document or password is incorrect' },
  UNKNOWN_HOLDER: { message: 'The document is not a holder of this tenant' },
  HOLDER_BLOCKED: { message: 'Conta bloqueada. Procure o suporte.' },
  HOLDER_NOT_FOUND: { code: 'NOT_FOUND', message: 'No holder with this document in this tenant' },
  ONBOARDING_INCOMPLETE: { message: 'Finish identity verification (onboardingLink) before operating the account' },
  ONBOARDING_FINISHED: { message: ({ step }: { step: string }) => `Onboarding already finished (${step})` },
  ACCOUNT_NOT_IN_KEY_SCOPE: { message: 'This API key does not reach that Pix account' },
  PIX_ACCOUNTS_NOT_FOUND: {
    code: 'NOT_FOUND',
    message: ({ pixAccountIds }: { pixAccountIds: string[] }) => `Pix account(s) not found in this tenant: ${pixAccountIds.join(', ')}`,
  },
  // The PIN
  PIN_NOT_SET: { message: 'Create a PIN first with POST /passwords/create-pin' },
  PIN_ALREADY_SET: { message: 'A PIN is already set; use POST /passwords/change-pin to change it' },
  INVALID_PIN: {
    message: ({ attemptsLeft }: { attemptsLeft: number }) => `Incorrect PIN; ${attemptsLeft} attempt${attemptsLeft === 1 ? '' : 's'} left before it is locked`,
  },
  PIN_LOCKED: { message: 'The PIN is locked after too many wrong attempts; contact support to unlock it' },
  PIN_ATTEMPTS_IN_FLIGHT: { code: 'RATE_LIMITED', message: 'Too many PIN attempts at once; try again' },
  // Rules every operation shares
  NOT_FOUND: { message: ({ what }: { what: string }) => notFoundMessage(what) },
  ACCOUNT_NOT_APPROVED: { message: 'The account is not APPROVED; operations need an APPROVED account' },
  IDEMPOTENCY_KEY_REUSED: { message: 'This Idempotency-Key was already used with a different request' },
  RATE_LIMITED: { message: ({ windowSeconds }: { windowSeconds: number }) => `Too many attempts; try again in up to ${Math.ceil(windowSeconds / 60)} minute(s)` },
  // Postings that debit an account (`settle_tev`, `debit_pix_payout`)
  SOURCE_NOT_FOUND: { code: 'NOT_FOUND', message: notFoundMessage('Account') },
  // TEV (`settle_tev`)
  DESTINATION_NOT_FOUND: { message: 'No account with this branch and number in this tenant' },
  SAME_ACCOUNT: { message: 'The destination is the source account itself' },
  /** A TEV scheduled above the largest one the platform settles (`TEV_MAX_AMOUNT_CENTS`): refused when asked, not when due. */
  AMOUNT_ABOVE_LIMIT: { message: ({ maxAmountCents }: { maxAmountCents: bigint }) => `The amount is above the largest TEV of ${maxAmountCents} cents` },
  EXTERNAL_REF_TAKEN: { message: 'This externalRef was already used by another transfer of this account' },
  BENEFICIARY_NOT_FOUND: { message: 'No holder of this tenant with this document can receive transfers' },
  /** The settlement function refused the request itself, which a retry would meet again: nothing moved. */
  TRANSFER_NOT_SETTLED: {
    code: 'INTERNAL_ERROR',
    message: 'The transfer could not be settled and nothing moved; the request id in X-Request-Id helps support find it',
  },
  // Pix payments (`debit_pix_payout` rejects a payment with INSUFFICIENT_BALANCE or SOURCE_NOT_ACTIVE)
  PIX_KEY_NOT_FOUND: { message: 'No account answers for this Pix key' },
  INSUFFICIENT_BALANCE: { message: 'The balance does not cover the amount and the fee' },
  SOURCE_NOT_ACTIVE: { message: 'The account cannot send Pix' },
  /** The debit function refused the request itself, which a retry would meet again: nothing moved. */
  PAYMENT_NOT_DEBITED: {
    code: 'INTERNAL_ERROR',
    message: 'The payment could not be debited and nothing moved; the request id in X-Request-Id helps support find it',
  },
  // Transaction limits (`check_and_count_limits`, src/ledger/sql/posting.sql): a TEV is rejected with this reason instead
  LIMIT_EXCEEDED: {
    message: ({ channel, period, limitCents, remainingCents }: LimitBreach) =>
      period === 'TRANSACTION'
        ? `The amount is above the ${channel} limit per transaction of ${limitCents} cents`
        : `The amount is above what remains of the ${channel} ${period.toLowerCase()} limit: ${remainingCents} of ${limitCents} cents`,
  },
  LIMIT_ABOVE_MAXIMUM: { message: ({ which }: { which: string[] }) => `Above the most the tenant allows: ${which.join('; ')}` },
  NIGHT_LIMIT_ABOVE_DAY: { message: ({ which }: { which: string[] }) => `A night limit cannot be above its channel's day limit: ${which.join('; ')}` },
  // Dual approval
  NOT_APPROVER: { message: 'Only the approver of this account can decide this request' },
  APPROVAL_ALREADY_DECIDED: { message: 'This approval request was already decided, was cancelled or has expired' },
  TEMPORARILY_UNAVAILABLE: { message: 'This could not be done right now; try again shortly' },
  APPROVER_IS_ACCOUNT_HOLDER: { code: 'INVALID_APPROVER', message: "The approver must be another holder than the account's own" },
  APPROVER_NOT_ACTIVE: { code: 'INVALID_APPROVER', message: 'The approver must be an ACTIVE holder' },
  // Trusted contacts
  CONTACT_ALREADY_EXISTS: { message: 'This account already has this contact; remove it first to add it again' },
  // Scheduled payments
  SCHEDULE_NOT_ACTIVE: { message: 'This schedule has no occurrence left to run: it was cancelled, or every occurrence ran' },
  OCCURRENCE_NOT_CANCELLABLE: { message: ({ status }: { status: string }) => `Only an occurrence still to run can be cancelled; this one is ${status}` },
  // Batch payouts
  BATCH_NOT_COVERED: {
    code: 'INSUFFICIENT_BALANCE',
    message: ({ totalCents, feeCents, balanceCents }: { totalCents: bigint; feeCents: bigint; balanceCents: bigint }) =>
      `The balance of ${balanceCents} cents does not cover the batch: ${totalCents} cents and ${feeCents} cents of fees; nothing was paid`,
  },
  BATCH_FINISHED: { message: ({ status }: { status: string }) => `This batch is ${status}: nothing of it is left to cancel` },
  // Webhooks
  WEBHOOK_URL_NOT_ALLOWED: { message: 'The URL must resolve to public addresses only (no loopback, private, link-local or metadata hosts)' },
  WEBHOOK_DISABLED: { message: 'The endpoint is deleted; register it again to receive events' },
  // Incoming Pix (`credit_incoming_pix`, whose ACCOUNT_NOT_APPROVED is RECEIVER_NOT_APPROVED here) and charges
  ACCOUNT_NOT_FOUND: { code: 'NOT_FOUND', message: notFoundMessage('Account') },
  RECEIVER_NOT_APPROVED: { code: 'ACCOUNT_NOT_APPROVED', message: 'The account cannot receive money before KYC approval' },
  ACCOUNT_NOT_ACTIVE: { message: 'The account is blocked or closed and receives nothing: the Pix goes back to its payer' },
  /** With the receive fee when the rule that refused knows it. */
  AMOUNT_BELOW_RECEIVE_FEE: { message: (facts?: { feeCents: bigint }) => `The amount does not cover the receive fee${facts ? ` of ${facts.feeCents} cents` : ''}` },
  CHARGE_ALREADY_PAID: { message: 'This charge was already paid' },
  CHARGE_EXPIRED: { message: 'This charge has expired' },
  CHARGE_REMOVED: { message: 'The receiver removed this charge' },
  CHARGE_NOT_PAID: { message: 'Only a paid charge can be refunded' },
  CHARGE_AMOUNT_MISMATCH: { message: ({ amountCents }: { amountCents: bigint }) => `This charge must be paid with exactly ${amountCents} cents` },
  REFUND_EXCEEDS_PAID: { message: ({ refundableCents }: { refundableCents: bigint }) => `At most ${refundableCents} cents of this charge can still be refunded` },
  REFUND_NOT_COVERED: { code: 'INSUFFICIENT_BALANCE', message: 'The account balance does not cover this refund' },
  // Dynamic BR Codes: reading a charge at its location
  QR_LOCATION_UNAVAILABLE: { message: ({ why }: { why: string }) => `The charge's location could not be read: ${why}` },
  QR_CHARGE_NOT_FOUND: {
    message: ({ status }: { status: number }) => `The receiver's institution serves no charge at this location (HTTP ${status}): it was removed or never existed`,
  },
  QR_PAYLOAD_INVALID: { message: ({ why }: { why: string }) => `The charge's payload is not a valid Pix charge: ${why}` },
  QR_SIGNATURE_INVALID: { message: ({ why }: { why: string }) => `The charge's payload is not signed by the receiver's institution: ${why}` },
  QR_LOCATION_INVALID: {
    message: ({ canonical }: { canonical: string }) =>
      `The location names this platform but is not a charge location it issued: those read exactly ${canonical}, without a query or a trailing slash`,
  },
  QR_AMOUNT_CHANGE_NOT_SUPPORTED: { message: 'This charge lets the payer change its amount (valor.modalidadeAlteracao 1), which this platform does not pay' },
  // The Pix provider and its notifications
  PIX_PROVIDER_UNAVAILABLE: { code: 'UNAVAILABLE', message: ({ why }: { why: string }) => `The Pix provider did not answer: ${why}` },
  INVALID_SIGNATURE: { message: ({ why }: { why: string }) => `The notification is refused: ${why}` },
  NOTIFICATION_ID_REUSED: { message: 'This webhook-id was already received with a different body' },
  PAYOUT_NOT_FOUND: { message: 'No submitted payout has this payoutId' },
  END_TO_END_ID_MISMATCH: { message: ({ endToEndId }: { endToEndId: string }) => `The payout settled under the end-to-end id ${endToEndId}` },
  PAYOUT_NOT_RETURNABLE: { message: ({ state }: { state: string }) => `Only a settled payout can be returned; this one is ${state}` },
  RETURN_EXCEEDS_PAYOUT: {
    message: ({ payoutId, amountCents, leftCents }: { payoutId: string; amountCents: bigint; leftCents: string }) =>
      `A return of ${amountCents} cents does not fit payout ${payoutId}: ${leftCents} cents are left to return`,
  },
  RECEIVER_NOT_FOUND: { message: 'No account of the platform has this branch and account number' },
  // Receipts
  RECEIPT_NOT_AVAILABLE: { message: ({ state }: { state: string }) => `A receipt exists only for a final, successful movement; this one is ${state}` },
} as const satisfies Record<string, RefusalEntry>;

export type Refusal = keyof typeof REFUSALS;

/** The facts a refusal's message is made of (`undefined`: none). */
export type FactsOf<R extends Refusal> = R extends Refusal ? ((typeof REFUSALS)[R]['message'] extends (facts: infer F) => string ? F : undefined) : never;

/** The code a caller is given for a refusal: the one its entry names, else its own name. */
export type CodeOf<R extends Refusal> = R extends Refusal ? ((typeof REFUSALS)[R] extends { code: infer C } ? C : R) : never;

/** The refusals among R that cannot be raised without their facts. */
type NeedingFacts<R extends Refusal> = R extends Refusal ? (undefined extends FactsOf<R> ? never : R) : never;

/** The facts a refusal needs, and the refused inputs (`details`) when it names some. */
type Arguments<R extends Refusal> = [NeedingFacts<R>] extends [never] ? [facts?: FactsOf<R>, details?: ErrorDetail[]] : [facts: FactsOf<R>, details?: ErrorDetail[]];

/** A use case's refusal: which rule refused (`refusal`), the code and message of its catalog entry, the refused inputs. */
export class DomainError<R extends Refusal = Refusal> extends Error {
  readonly refusal: R;
  readonly code: CodeOf<R>;
  readonly details: ErrorDetail[] | undefined;

  constructor(refusal: R, ...[facts, details]: Arguments<R>) {
    const entry: RefusalEntry = REFUSALS[refusal];
    super(typeof entry.message === 'string' ? entry.message : (entry.message as (facts: unknown) => string)(facts));
    this.name = 'DomainError';
    this.refusal = refusal;
    this.code = (entry.code ?? refusal) as CodeOf<R>;
    this.details = details;
  }

  toBody(): { code: CodeOf<R>; message: string; details?: ErrorDetail[] } {
    return this.details ? { code: this.code, message: this.message, details: this.details } : { code: this.code, message: this.message };
  }
}

/** A refusal, of either kind: its answer is known and nothing moved (unlike a failure, whose outcome may be unknown). */
export const isRefusal = (err: unknown): err is AppError | DomainError => err instanceof AppError || err instanceof DomainError;

export const notFound = (what: string) => new DomainError('NOT_FOUND', { what });
export const unauthorized = (reason: UnauthorizedReason) => new DomainError('UNAUTHORIZED', { reason });

/**
 * What a use case declares it can raise, as `useCase.raises = refusals(...)` under it: a route documents the
 * refusals of the use cases it calls, as the error codes of its operation.
 */
export interface Raising {
  readonly raises: readonly Refusal[];
}

/** The refusals a declaration names, itself or through the use cases it names. */
type RefusalsOf<S> = S extends Refusal ? S : S extends { readonly raises: readonly (infer R)[] } ? R : never;

/**
 * A declaration: these refusals and those of the use cases named (the rules a use case calls), in this order, each
 * once. The order is the documents' order of the codes of one status.
 */
export function refusals<const S extends readonly (Refusal | Raising)[]>(...sources: S): readonly RefusalsOf<S[number]>[] {
  return [
    ...new Set(
      sources.flatMap((source) => {
        if (typeof source === 'string') return [source];
        // A use case declared further down its module has no declaration yet when this one is made.
        if (!source.raises) throw new Error('refusals(): a use case named here has no declaration yet; declare it first');
        return source.raises;
      }),
    ),
  ] as RefusalsOf<S[number]>[];
}
