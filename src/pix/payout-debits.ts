import type { EntityManager } from '@mikro-orm/postgresql';
import type { Config } from '../config.ts';
import { PostingQueue } from '../ledger/posting-queue.ts';
import { callPostingBatch, callPostingFunction } from '../ledger/store.ts';
import { DomainError, refusals, type LimitBreach } from '../shared/errors.ts';
import { newCuid } from '../shared/ids.ts';
import { isoUtc } from '../shared/pagination.ts';
import type { WorkflowStart } from '../temporal/workflow-start.ts';
import type { PayoutDebit, PayoutOpening } from '../../workflows/contracts/pix-payout.ts';
import type { PixPayoutState } from './payout-store.ts';

/**
 * The Pix debit's SQL (`debit_pix_payout` and `debit_pix_payout_batch`, src/ledger/sql/): this passes the requests and
 * reads the answers; every rule and every write is in the function.
 */

/**
 * What the debit does when the account is under dual approval, decided on its locked row: `ASK` answers
 * APPROVAL_REQUIRED with nothing written (a payment request, which the caller then holds for the approver); `REFUSE`
 * records the payout REJECTED with that reason (a request whose answer was lost, resolved later: it never skips the
 * approver); `GRANTED` debits it (the approver approved it, or its batch as a whole).
 */
export type DebitApproval = 'ASK' | 'REFUSE' | 'GRANTED';

/** A debit to run, and the hand-off of its settlement workflow; null when the caller starts that workflow itself. */
export interface DebitRequest {
  debit: PayoutDebit;
  approval: DebitApproval;
  handOff: { taskQueue: string; start: WorkflowStart } | null;
}

export interface DebitRow {
  code: string;
  status: PixPayoutState | null;
  reason: string | null;
  fee_cents: string | null;
  created_at: string | null;
  /** A payout REJECTED with LIMIT_EXCEEDED: the limit it broke. */
  details: LimitBreach | null;
  /** The receiver is a trusted contact of the payer now (`is_trusted_contact`), read by the debit for its answer. */
  trusted_contact: boolean;
}

/**
 * What the debit came to: PROCESSING or REJECTED (with the limit broken, for LIMIT_EXCEEDED), PENDING for a payout
 * recorded earlier whose workflow debits it, or nothing written because the account is under dual approval (asked
 * with `ASK`); and whether its receiver is a trusted contact of the payer, null where the debit did not answer it.
 */
export type DebitOutcome =
  | { kind: 'decided'; opening: PayoutOpening; limitBreach: LimitBreach | null; trustedContact: boolean | null }
  | { kind: 'pending'; payoutId: string; amountCents: string; trustedContact: boolean | null }
  | { kind: 'approval_required' };

/** A debit's outcome for a request that is (or will be) a payout. */
export type PayoutOutcome = Exclude<DebitOutcome, { kind: 'approval_required' }>;

/** 3 movements and 4 entries at most; cuid2 ids are made here, where the library is. */
const newPostingIds = (): string[] => Array.from({ length: 7 }, newCuid);

const ANSWER = `code, status, reason, fee_cents::text as fee_cents, ${isoUtc('created_at')} as created_at, details, trusted_contact`;

const DEBIT_PARAMS = ['', '::uuid', '::uuid', '', '::bigint', '', '', '::jsonb', '::jsonb', '', '', '', '::text[]', '::jsonb', ''];

/** One debit in its own statement (see `callPostingFunction`). */
export async function callDebit(em: EntityManager, { debit: d, approval, handOff }: DebitRequest): Promise<DebitRow> {
  return callPostingFunction<DebitRow>(em, 'debit_pix_payout', ANSWER, DEBIT_PARAMS, [
    d.payoutId, d.tenantId, d.accountId, d.channel, d.amountCents, d.pixKey, d.pixKeyType, JSON.stringify(d.beneficiary),
    d.qr ? JSON.stringify(d.qr) : null, d.description, d.idempotencyKey, d.requestHash,
    // As an array literal: the query builder would spread a JavaScript array into separate parameters.
    `{${newPostingIds().join(',')}}`,
    handOff ? JSON.stringify({ ...handOff.start, taskQueue: handOff.taskQueue }) : null,
    approval,
  ]);
}

/** Several debits in one statement and one transaction, answers in order; if it fails, nothing of it was written. */
export async function callDebitBatch(em: EntityManager, requests: DebitRequest[]): Promise<DebitRow[]> {
  const items = requests.map(({ debit: d, approval, handOff }) => ({
    payout_id: d.payoutId,
    tenant_id: d.tenantId,
    account_id: d.accountId,
    channel: d.channel,
    amount: d.amountCents,
    pix_key: d.pixKey,
    pix_key_type: d.pixKeyType,
    beneficiary: d.beneficiary,
    qr: d.qr,
    description: d.description,
    idempotency_key: d.idempotencyKey,
    request_hash: d.requestHash,
    ids: newPostingIds(),
    handoff: handOff ? { ...handOff.start, taskQueue: handOff.taskQueue } : null,
    approval,
  }));
  return callPostingBatch<DebitRow>(em, 'debit_pix_payout_batch', `ord::text as ord, ${ANSWER}`, ['::jsonb'], [JSON.stringify(items)], items.length);
}

/** The codes by which `debit_pix_payout` refuses a request, each the name of its refusal in the catalog. */
const DEBIT_REFUSALS = refusals('SOURCE_NOT_FOUND', 'IDEMPOTENCY_KEY_REUSED');

/** The debit's answer for its request; a request that could not become a payout throws its refusal. */
export function outcomeOf(d: PayoutDebit, row: DebitRow): DebitOutcome {
  const refusal = DEBIT_REFUSALS.find((code) => code === row.code);
  if (refusal) throw new DomainError(refusal);
  if (row.code === 'APPROVAL_REQUIRED') return { kind: 'approval_required' };
  if (row.code === 'PENDING') return { kind: 'pending', payoutId: d.payoutId, amountCents: d.amountCents, trustedContact: row.trusted_contact };
  return {
    kind: 'decided',
    opening: {
      payoutId: d.payoutId,
      status: row.status === 'REJECTED' ? 'REJECTED' : 'PROCESSING',
      amountCents: d.amountCents,
      feeCents: row.fee_cents ?? '0',
      reason: row.reason,
      createdAt: row.created_at!,
    },
    limitBreach: row.details,
    trustedContact: row.trusted_contact,
  };
}
outcomeOf.raises = DEBIT_REFUSALS;

export type PixDebitQueueConfig = Pick<Config, 'PIX_BATCH_LANES' | 'PIX_BATCH_MAX' | 'TEV_RESPONSE_DEADLINE_MS'>;

/**
 * The request path's Pix debits (`PostingQueue`), keyed by payer only: every debit of a tenant credits its settlement
 * account, but the SQL locks that account last, in one statement per batch (`post_pix_debits`), so batches of one
 * tenant run beside each other and queue only for that statement and the commit.
 */
export class PixDebitQueue extends PostingQueue<DebitRequest, DebitRow> {
  constructor(em: EntityManager, config: PixDebitQueueConfig) {
    super(em, {
      lanes: config.PIX_BATCH_LANES,
      batchMax: config.PIX_BATCH_MAX,
      deadlineMs: config.TEV_RESPONSE_DEADLINE_MS,
      accountsOf: ({ debit }) => [debit.accountId],
      one: callDebit,
      batch: callDebitBatch,
    });
  }

  /** Debits one payment request: the same answer as `debitPayout`, alone or in a batch. */
  async debit(request: DebitRequest): Promise<DebitOutcome> {
    return outcomeOf(request.debit, await this.post(request));
  }
}
