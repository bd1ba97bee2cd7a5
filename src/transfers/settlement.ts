import type { EntityManager } from '@mikro-orm/postgresql';
import type { Config } from '../config.ts';
import { refusals } from '../shared/errors.ts';
import { requestHash } from '../shared/idempotency.ts';
import { newCuid } from '../shared/ids.ts';
import type { WorkflowStart } from '../temporal/workflow-start.ts';
import type { TevOutcome, TevResolutionInput, TevSubmission } from '../../workflows/contracts/tev.ts';
import { callSettleTev, callSettleTevBatch, type SettleRow } from './store.ts';

/**
 * How `settle_tev` treats a transfer:
 * - SUBMIT: the request-time checks (source may operate, destination exists, dual approval), then settle;
 * - DEFER: the same checks, then record it PROCESSING and hand it to its workflow, which resolves it later (the
 *   sandbox's ,97 and ,98); not a payment held for dual approval, which `settle_tev` refuses APPROVAL_REQUIRED;
 * - RESOLVE: settle, or read how it settled (the resolution workflow, an approved request);
 * - FAIL: resolve it FAILED with a given reason, nothing moved (sandbox ,98).
 */
export type SettleMode = 'SUBMIT' | 'DEFER' | 'RESOLVE' | 'FAIL';

/**
 * Why `settle_tev` refuses a request (it cannot become a transfer as asked), under the catalog's names: raised as they
 * come. EXTERNAL_REF_TAKEN only refuses a request that carries an externalRef.
 */
export const SETTLE_TEV_REFUSALS = refusals(
  'SOURCE_NOT_FOUND',
  'HOLDER_BLOCKED',
  'ONBOARDING_INCOMPLETE',
  'ACCOUNT_NOT_APPROVED',
  'DESTINATION_NOT_FOUND',
  'SAME_ACCOUNT',
  'IDEMPOTENCY_KEY_REUSED',
  'EXTERNAL_REF_TAKEN',
);

/** The answers of `settle_tev` that are not a transfer state: a refusal, or a payment to hold for the account's approver. */
export type SettlementRefusal = (typeof SETTLE_TEV_REFUSALS)[number] | 'APPROVAL_REQUIRED';

export type Settlement =
  | { code: 'DONE' | 'FAILED'; outcome: TevOutcome }
  | { code: 'PROCESSING'; tevId: string }
  | { code: SettlementRefusal; destinationId: string | null };

/** 3 movements and 5 entries at most; cuid2 ids are made here, where the library is. */
const ID_COUNT = 8;
const newPostingIds = (): string[] => Array.from({ length: ID_COUNT }, newCuid);

/**
 * Settles (or records, or reads) one TEV in one statement: one round trip, one transaction. Everything the transfer
 * writes is in `settle_tev` (src/ledger/sql/settle_tev.sql); this only passes the request and reads the answer.
 */
export async function settleTev(
  em: EntityManager,
  config: Pick<Config, 'TEV_MAX_AMOUNT_CENTS'>,
  submission: TevSubmission,
  mode: SettleMode,
  options: { handOff?: WorkflowStart & { taskQueue: string }; failReason?: string } = {},
): Promise<Settlement> {
  const destination = destinationOf(submission);
  const r = await callSettleTev(em, [
    mode,
    submission.tevId,
    submission.tenantId,
    submission.sourceAccountId,
    destination.id,
    destination.branch,
    destination.account,
    submission.amountCents,
    submission.description,
    submission.externalRef,
    submission.endToEndId,
    submission.idempotencyKey,
    tevRequestHash(submission),
    submission.origin,
    config.TEV_MAX_AMOUNT_CENTS.toString(),
    `{${newPostingIds().join(',')}}`,
    options.handOff ? JSON.stringify(options.handOff) : null,
    options.failReason ?? null,
  ]);
  return settlementOf(r);
}

/**
 * Submits several TEV requests (SUBMIT mode each) in one statement and one transaction, `settle_tev_batch`
 * (src/ledger/sql/settle_tev_batch.sql): the answers, in the order of `submissions`. If the statement fails, nothing of it was written.
 * A request the batch leaves alone (a retry, a second request with the same key, an externalRef taken) is then settled
 * by itself, in its own statement.
 */
export async function settleTevBatch(em: EntityManager, config: Pick<Config, 'TEV_MAX_AMOUNT_CENTS'>, submissions: TevSubmission[]): Promise<Settlement[]> {
  const rows = await callSettleTevBatch(
    em,
    submissions.map((submission) => {
      const destination = destinationOf(submission);
      return {
        tev_id: submission.tevId,
        tenant_id: submission.tenantId,
        source_id: submission.sourceAccountId,
        destination_id: destination.id,
        destination_branch: destination.branch,
        destination_account: destination.account,
        amount: submission.amountCents,
        description: submission.description,
        external_ref: submission.externalRef,
        end_to_end_id: submission.endToEndId,
        idempotency_key: submission.idempotencyKey,
        request_hash: tevRequestHash(submission),
        origin: submission.origin,
        ids: newPostingIds(),
      };
    }),
    config.TEV_MAX_AMOUNT_CENTS.toString(),
  );
  const settlements: Settlement[] = [];
  // ALONE: a retry or a conflict of the request's own, answered by settle_tev after the batch, as any retry is.
  for (const [i, row] of rows.entries()) {
    settlements.push(row.code === 'ALONE' ? await settleTev(em, config, submissions[i]!, 'SUBMIT') : settlementOf(row));
  }
  return settlements;
}

/**
 * What a TEV request asks for, as the client sent it: the same Idempotency-Key with another request is refused
 * (IDEMPOTENCY_KEY_REUSED). Migration 20261124000950 gave the transfers recorded before this the same form.
 */
export function tevRequestHash(submission: TevSubmission): string {
  const destination = destinationOf(submission);
  return requestHash([destination.id, destination.branch, destination.account, submission.amountCents, submission.description, submission.externalRef]);
}

/** The destination as `settle_tev` takes it: an account id, or a branch and account number. */
function destinationOf(submission: TevSubmission): { id: string | null; branch: string | null; account: string | null } {
  return 'accountId' in submission.destination
    ? { id: submission.destination.accountId, branch: null, account: null }
    : { id: null, branch: submission.destination.branch, account: submission.destination.account };
}

/** An answer of `settle_tev`: a transfer state, or the refusal that kept the request from becoming one. */
function settlementOf(row: SettleRow): Settlement {
  const code = row.code as Settlement['code'];
  if (code === 'DONE' || code === 'FAILED') {
    return {
      code,
      outcome: {
        tevId: row.tev_id,
        status: code,
        amountCents: String(row.amount_cents),
        feeCents: String(row.fee_out_cents ?? '0'),
        reason: row.reason,
        resolvedAt: new Date(row.resolved_at!).toISOString(),
      },
    };
  }
  if (code === 'PROCESSING') return { code: 'PROCESSING', tevId: row.tev_id };
  return { code, destinationId: row.destination_id };
}

/** The sandbox's failure of a ,98 transfer. */
export const SANDBOX_FAILURE = 'SANDBOX_FAILURE';

/**
 * The resolution workflow's step: settles the transfer (or fails it, for the sandbox's ,98), idempotently by tevId.
 * A request that cannot become a transfer at all (its destination vanished) resolves FAILED without a record.
 */
export async function resolveTev(em: EntityManager, config: Pick<Config, 'TEV_MAX_AMOUNT_CENTS'>, input: TevResolutionInput): Promise<TevOutcome> {
  const fail = input.sandbox?.outcome === 'FAILED';
  const settled = await settleTev(em, config, input.submission, fail ? 'FAIL' : 'RESOLVE', fail ? { failReason: SANDBOX_FAILURE } : {});
  if (settled.code === 'DONE' || settled.code === 'FAILED') return settled.outcome;
  if (settled.code === 'PROCESSING') throw new Error(`TEV ${input.submission.tevId} is still processing`);
  return { tevId: input.submission.tevId, status: 'FAILED', amountCents: input.submission.amountCents, feeCents: '0', reason: settled.code, resolvedAt: new Date().toISOString() };
}
