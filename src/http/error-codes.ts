import { REFUSALS, type CodeOf, type DomainError, type Raising, type Refusal } from '../shared/errors.ts';

/**
 * Every `code` of the error body an HTTP API answers, with what it means. The OpenAPI documents publish each status
 * of an operation with exactly the codes it can answer as an enum, so a client can switch on them. The text doubles as
 * the example `message` of the documents.
 */
export const ERROR_CODES = {
  VALIDATION_ERROR: 'An input is refused: `details` lists each refused input with its path and the rule it breaks',
  UNKNOWN_TENANT: 'X-Tenant-Id does not name a tenant',
  SAME_ACCOUNT: 'The destination is the source account itself',
  DESTINATION_NOT_FOUND: 'No account with this branch and number in this tenant',
  AMOUNT_ABOVE_LIMIT: 'The amount is above the largest single TEV the platform settles; nothing was recorded',
  WEBHOOK_URL_NOT_ALLOWED: 'The URL must resolve to public addresses only (no loopback, private, link-local or metadata hosts)',
  UNAUTHORIZED: 'Missing, invalid, expired or revoked credentials; authenticate again',
  INVALID_CREDENTIALS: 'Document or password is incorrect',
  HOLDER_BLOCKED: 'Conta bloqueada. Procure o suporte.',
  UNKNOWN_HOLDER: 'The document is not a holder of this tenant',
  ONBOARDING_INCOMPLETE: 'Finish identity verification (onboardingLink) before operating the account',
  ACCOUNT_NOT_APPROVED: 'The account is not APPROVED; operations need an APPROVED account',
  ACCOUNT_NOT_ACTIVE: 'The account is blocked or closed and receives nothing: the Pix goes back to its payer',
  PIN_NOT_SET: 'Create a PIN first with POST /passwords/create-pin',
  INVALID_PIN: 'Incorrect PIN; 2 attempts left before it is locked',
  ACCOUNT_NOT_IN_KEY_SCOPE: 'This API key does not reach that Pix account',
  NOT_APPROVER: 'Only the approver of this account can decide this request',
  NOT_FOUND: 'Not found, or not visible to the caller',
  BENEFICIARY_NOT_FOUND: 'No holder of this tenant with this document can receive transfers',
  NOT_ACCEPTABLE: 'This endpoint answers application/json; send Accept: application/json',
  REQUEST_TIMEOUT: 'The request was not received in time',
  EMAIL_TAKEN: 'A holder with this email already exists in this tenant',
  DOCUMENT_TAKEN: 'A holder with this document already exists in this tenant',
  ONBOARDING_FINISHED: 'Onboarding already finished (DONE or REJECTED)',
  PIN_ALREADY_SET: 'A PIN is already set; use POST /passwords/change-pin to change it',
  IDEMPOTENCY_KEY_REUSED: 'This Idempotency-Key was already used with a different request',
  EXTERNAL_REF_TAKEN: 'This externalRef was already used by another transfer of this account',
  APPROVAL_ALREADY_DECIDED: 'This approval request was already decided, was cancelled or has expired',
  CHARGE_ALREADY_PAID: 'This charge was already paid',
  CHARGE_EXPIRED: 'This charge has expired',
  CHARGE_REMOVED: 'The receiver removed this charge',
  CHARGE_NOT_PAID: 'Only a paid charge can be refunded',
  RECEIPT_NOT_AVAILABLE: 'A receipt exists only for a final, successful movement; this one is PROCESSING',
  WEBHOOK_DISABLED: 'The endpoint is deleted; register it again to receive events',
  CONTACT_ALREADY_EXISTS: 'This account already has this contact (not removed)',
  SCHEDULE_NOT_ACTIVE: 'This schedule has no occurrence left to run: it was cancelled, or every occurrence ran',
  OCCURRENCE_NOT_CANCELLABLE: 'Only an occurrence still to run (SCHEDULED) can be cancelled; this one ran, is running or was cancelled',
  BATCH_FINISHED: 'The batch has ended (finished, cancelled, rejected or refused): nothing of it is left to cancel',
  PAYLOAD_TOO_LARGE: 'The request body is too large',
  UNSUPPORTED_MEDIA_TYPE: 'Send the body as UTF-8 JSON',
  INSUFFICIENT_BALANCE: 'The balance does not cover the amount and the fee; nothing moved',
  LIMIT_ABOVE_MAXIMUM: "A limit asked for is above the most the tenant allows; `details` names each one with its maximum",
  NIGHT_LIMIT_ABOVE_DAY: 'A night limit cannot be above the day limit of its channel; `details` names each one',
  LIMIT_EXCEEDED: "The amount breaks one of the account's transaction limits; nothing moved. `details` names the limit (channel, period), its value and what remains of it",
  SOURCE_NOT_ACTIVE: 'The account may not move money',
  PIX_KEY_NOT_FOUND: 'No account answers for this Pix key',
  QR_LOCATION_UNAVAILABLE: "The dynamic BR Code's location could not be read (unreachable, refused address, timeout, or an unexpected answer)",
  QR_CHARGE_NOT_FOUND: "The receiver's institution serves no charge at the dynamic BR Code's location (404 or 410)",
  QR_PAYLOAD_INVALID: "The location's answer is not a valid Pix charge payload (not a JWS, a field missing or malformed, another txid)",
  QR_SIGNATURE_INVALID: "The charge's payload is not signed by the receiver's institution (altered, unsigned, unknown key, key set on another host)",
  QR_LOCATION_INVALID: "The dynamic BR Code's location names this platform but is not a charge location it issued (a query, a trailing slash or another spelling)",
  QR_AMOUNT_CHANGE_NOT_SUPPORTED: 'The charge lets the payer change its amount (modalidadeAlteracao 1), which this platform does not pay',
  AMOUNT_BELOW_RECEIVE_FEE: 'The amount does not cover the receive fee',
  CHARGE_AMOUNT_MISMATCH: 'This charge must be paid with exactly its amount',
  REFUND_EXCEEDS_PAID: 'The refunds of a charge cannot add up to more than it received',
  PIN_LOCKED: 'The PIN is locked after too many wrong attempts; contact support to unlock it',
  RATE_LIMITED: 'Too many attempts; try again later',
  INVALID_SIGNATURE: "The notification's webhook-signature does not verify over its webhook-id, webhook-timestamp and body, or its timestamp is more than 5 minutes away",
  NOTIFICATION_ID_REUSED: 'This webhook-id was already received with a different body',
  PAYOUT_NOT_FOUND: 'No submitted payout has this payoutId',
  RECEIVER_NOT_FOUND: 'No account of the platform has this branch and account number',
  END_TO_END_ID_MISMATCH: 'The payout settled under another end-to-end id',
  PAYOUT_NOT_RETURNABLE: 'Only a settled payout can be returned; this one failed or was cancelled',
  RETURN_EXCEEDS_PAYOUT: 'The returns of a payout cannot add up to more than it sent',
  HEADERS_TOO_LARGE: 'The request line and headers exceed 16 KiB',
  INTERNAL_ERROR: 'Something went wrong on our side; the request id in X-Request-Id helps support find it',
  UNAVAILABLE: 'The platform could not answer in time; retry later with the same Idempotency-Key',
  TEMPORARILY_UNAVAILABLE: 'This could not be done right now; try again shortly',
  // Raised by the operator's account:dual-approval, which no route calls: here because every refusal's code is described.
  INVALID_APPROVER: "An account's approver must be another ACTIVE holder of its tenant than the account's own",
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;

/** The codes an operation can answer, by HTTP status. */
export type ErrorsByStatus = Partial<Record<number, readonly ErrorCode[]>>;

/**
 * The one table from a refusal to HTTP: its status (its code and message are the refusal's own, in the catalog of
 * src/shared/errors.ts). The error middleware answers with it, and `defineRoute` documents the codes of the refusals
 * an operation's use cases declare at these statuses.
 */
export const REFUSAL_STATUS: { readonly [R in Refusal]: number } = {
  UNKNOWN_TENANT: 400,
  EMAIL_TAKEN: 409,
  DOCUMENT_TAKEN: 409,
  UNAUTHORIZED: 401,
  INVALID_CREDENTIALS: 401,
  UNKNOWN_HOLDER: 401,
  HOLDER_BLOCKED: 401,
  HOLDER_NOT_FOUND: 404,
  ONBOARDING_INCOMPLETE: 403,
  ONBOARDING_FINISHED: 409,
  ACCOUNT_NOT_IN_KEY_SCOPE: 403,
  PIX_ACCOUNTS_NOT_FOUND: 404,
  PIN_NOT_SET: 403,
  PIN_ALREADY_SET: 409,
  INVALID_PIN: 403,
  PIN_LOCKED: 423,
  PIN_ATTEMPTS_IN_FLIGHT: 429,
  NOT_FOUND: 404,
  ACCOUNT_NOT_APPROVED: 403,
  IDEMPOTENCY_KEY_REUSED: 409,
  RATE_LIMITED: 429,
  SOURCE_NOT_FOUND: 404,
  DESTINATION_NOT_FOUND: 400,
  SAME_ACCOUNT: 400,
  AMOUNT_ABOVE_LIMIT: 422,
  EXTERNAL_REF_TAKEN: 409,
  BENEFICIARY_NOT_FOUND: 404,
  TRANSFER_NOT_SETTLED: 500,
  PIX_KEY_NOT_FOUND: 422,
  INSUFFICIENT_BALANCE: 422,
  SOURCE_NOT_ACTIVE: 422,
  PAYMENT_NOT_DEBITED: 500,
  LIMIT_EXCEEDED: 422,
  LIMIT_ABOVE_MAXIMUM: 422,
  NIGHT_LIMIT_ABOVE_DAY: 422,
  NOT_APPROVER: 403,
  APPROVAL_ALREADY_DECIDED: 409,
  TEMPORARILY_UNAVAILABLE: 503,
  // Only the operator CLI raises these; the table gives every refusal a status all the same.
  APPROVER_IS_ACCOUNT_HOLDER: 422,
  APPROVER_NOT_ACTIVE: 422,
  CONTACT_ALREADY_EXISTS: 409,
  SCHEDULE_NOT_ACTIVE: 409,
  OCCURRENCE_NOT_CANCELLABLE: 409,
  BATCH_NOT_COVERED: 422,
  BATCH_FINISHED: 409,
  WEBHOOK_URL_NOT_ALLOWED: 400,
  WEBHOOK_DISABLED: 409,
  ACCOUNT_NOT_FOUND: 404,
  RECEIVER_NOT_APPROVED: 422,
  ACCOUNT_NOT_ACTIVE: 422,
  AMOUNT_BELOW_RECEIVE_FEE: 422,
  CHARGE_ALREADY_PAID: 409,
  CHARGE_EXPIRED: 409,
  CHARGE_REMOVED: 409,
  CHARGE_NOT_PAID: 409,
  CHARGE_AMOUNT_MISMATCH: 422,
  REFUND_EXCEEDS_PAID: 422,
  REFUND_NOT_COVERED: 422,
  QR_LOCATION_UNAVAILABLE: 422,
  QR_CHARGE_NOT_FOUND: 422,
  QR_PAYLOAD_INVALID: 422,
  QR_SIGNATURE_INVALID: 422,
  QR_LOCATION_INVALID: 422,
  QR_AMOUNT_CHANGE_NOT_SUPPORTED: 422,
  PIX_PROVIDER_UNAVAILABLE: 503,
  INVALID_SIGNATURE: 401,
  NOTIFICATION_ID_REUSED: 409,
  PAYOUT_NOT_FOUND: 404,
  END_TO_END_ID_MISMATCH: 422,
  PAYOUT_NOT_RETURNABLE: 422,
  RETURN_EXCEEDS_PAYOUT: 422,
  RECEIVER_NOT_FOUND: 404,
  RECEIPT_NOT_AVAILABLE: 409,
};

/** Every code a refusal is answered with is one of the published codes, described above. */
const codeOf = (refusal: Refusal): ErrorCode => (REFUSALS[refusal] as { code?: CodeOf<Refusal> }).code ?? (refusal as CodeOf<Refusal>);

/** What a caller hears of a refusal: the table's status, and decisions.md's error body. */
export function answerTo(err: DomainError): { status: number; body: ReturnType<DomainError['toBody']> } {
  return { status: REFUSAL_STATUS[err.refusal], body: err.toBody() };
}

/** The codes of the refusals that use cases declare, by the status the table gives them; in declaration order. */
export function errorsRaisedBy(useCases: readonly Raising[]): ErrorsByStatus {
  const byStatus: Partial<Record<number, ErrorCode[]>> = {};
  for (const refusal of useCases.flatMap((u) => u.raises)) {
    const codes = (byStatus[REFUSAL_STATUS[refusal]] ??= []);
    if (!codes.includes(codeOf(refusal))) codes.push(codeOf(refusal));
  }
  return byStatus;
}
