import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { WithStartWorkflowOperation } from '@temporalio/client';
import { Account } from '../accounts/entities.ts';
import { AGENCY } from '../accounts/service.ts';
import type { Services } from '../services.ts';
import { AppError } from '../shared/errors.ts';
import { derivedId } from '../shared/ids.ts';
import { assertSameRequest, requestHash } from '../shared/idempotency.ts';
import { updateWithStartWithin } from '../temporal/early-return.ts';
import { SearchAttributes } from '../temporal/search-attributes.ts';
import { tevOutcome, tevWorkflow, tevWorkflowId, type TevOutcome } from '../../workflows/tev.ts';

export type TevOrigin = 'HOLDER_API' | 'INTEGRATION_API' | 'APPROVAL';

export interface TevRequest {
  tenantId: string;
  source: Account;
  destination: Account;
  amountCents: bigint;
  description: string | null;
  externalRef: string | null;
  idempotencyKey: string;
  origin: TevOrigin;
}

export type TevResult = { kind: 'done' | 'rejected'; outcome: TevOutcome } | { kind: 'submitted_unknown'; tevId: string; reason: string };

/** The transfer id, from the source account and the idempotency key. */
export const tevIdFor = (pepper: string, sourceAccountId: string, idempotencyKey: string): string =>
  derivedId(pepper, 't', `tev:${sourceAccountId}:${idempotencyKey}`);

/** Destination by branch and account, with or without leading zeros, in the caller's tenant. */
export async function findDestination(em: EntityManager, tenantId: string, branch: string, account: string): Promise<Account | null> {
  const number = account.replace(/^0+/, '');
  const agency = branch.replace(/^0+/, '').padStart(AGENCY.length, '0');
  return em.findOne(Account, { tenantId, agency, number, kind: 'HOLDER' });
}

interface StoredTev {
  id: string;
  status: 'PROCESSING' | 'DONE' | 'FAILED';
  request_hash: string;
  amount_cents: string;
  fee_out_cents: string | null;
  reason: string | null;
  resolved_at: string | null;
}

const STORED_COLUMNS = 'id, status, request_hash, amount_cents, fee_out_cents, reason, resolved_at';

const stored = (row: StoredTev): TevResult | null =>
  row.status === 'PROCESSING'
    ? null
    : {
        kind: row.status === 'DONE' ? 'done' : 'rejected',
        outcome: {
          tevId: row.id,
          status: row.status,
          amountCents: row.amount_cents,
          feeCents: row.status === 'DONE' ? (row.fee_out_cents ?? '0') : '0',
          reason: row.reason,
          resolvedAt: new Date(row.resolved_at!).toISOString(),
        },
      };

/**
 * Records the transfer in PostgreSQL, the durable record of idempotency keys and results. A key reused with another
 * body is 409; with the same body, the stored result once the transfer has resolved.
 */
export async function recordTev(em: EntityManager, pepper: string, r: TevRequest): Promise<{ tevId: string; stored: TevResult | null }> {
  if (r.source.id === r.destination.id) throw new AppError(400, 'SAME_ACCOUNT', 'The destination is the source account itself');
  const tevId = tevIdFor(pepper, r.source.id, r.idempotencyKey);
  const hash = requestHash([r.destination.id, r.amountCents.toString(), r.description, r.externalRef]);
  // No conflict target: two identical requests racing may collide on the id or on (source account, key) first;
  // either way the loser does nothing and reads the winner's record.
  const inserted = await em.execute<StoredTev[]>(
    `insert into tev_transfer (id, tenant_id, source_account_id, destination_account_id, amount_cents, description, external_ref,
                               end_to_end_id, idempotency_key, request_hash, origin, status)
     values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'PROCESSING')
     on conflict do nothing
     returning ${STORED_COLUMNS}`,
    [tevId, r.tenantId, r.source.id, r.destination.id, r.amountCents.toString(), r.description, r.externalRef, randomUUID(), r.idempotencyKey, hash, r.origin],
  );
  if (inserted.length > 0) return { tevId, stored: null };
  const [existing] = await em.execute<StoredTev[]>(`select ${STORED_COLUMNS} from tev_transfer where id = ?`, [tevId]);
  // Not this request's record: the conflict was another transfer's externalRef.
  if (!existing) throw new AppError(409, 'EXTERNAL_REF_TAKEN', 'This externalRef was already used by another transfer of this account');
  assertSameRequest(existing.request_hash, hash);
  return { tevId, stored: stored(existing) };
}

/**
 * Records the transfer, then runs its workflow with Update-with-Start and waits for the outcome until the deadline:
 * `done`, `rejected`, or `submitted_unknown` (the workflow still resolves it by itself).
 */
export async function submitTev({ orm, temporal, config }: Services, r: TevRequest): Promise<TevResult> {
  const em = orm.em.fork();
  const { tevId, stored: result } = await recordTev(em, config.KEY_PEPPER, r);
  if (result) return result;

  const client = temporal.client;
  const start = new WithStartWorkflowOperation(tevWorkflow, {
    workflowId: tevWorkflowId(tevId),
    taskQueue: config.TEMPORAL_TASK_QUEUE,
    args: [{ tevId }],
    workflowIdConflictPolicy: 'USE_EXISTING',
    // A run that failed or was terminated before resolving may be started again; a completed one never is.
    workflowIdReusePolicy: 'ALLOW_DUPLICATE_FAILED_ONLY',
    typedSearchAttributes: [
      { key: SearchAttributes.TenantId, value: r.tenantId },
      { key: SearchAttributes.AccountId, value: r.source.id },
      { key: SearchAttributes.TevId, value: tevId },
    ],
  });
  const outcome = await updateWithStartWithin(client, config.TEV_RESPONSE_DEADLINE_MS, tevOutcome, start);
  if (outcome) return { kind: outcome.status === 'DONE' ? 'done' : 'rejected', outcome };
  // No outcome in time or an interrupted call: the run, if it started, settles the transfer; if it did not, a retry
  // with the same Idempotency-Key starts it.
  const [row] = await em.execute<StoredTev[]>(`select ${STORED_COLUMNS} from tev_transfer where id = ?`, [tevId]);
  return stored(row!) ?? { kind: 'submitted_unknown', tevId, reason: 'The outcome is not known yet; the platform resolves it by itself. Follow GET /v1/tev/:id or the tev.out.* events.' };
}
