import type { EntityManager } from '@mikro-orm/postgresql';
import type { Config } from '../config.ts';
import { PostingQueue } from '../ledger/posting-queue.ts';
import type { TevSubmission } from '../../workflows/contracts/tev.ts';
import { settleTev, settleTevBatch, type Settlement } from './settlement.ts';

export type SettlementQueueConfig = Pick<Config, 'TEV_MAX_AMOUNT_CENTS' | 'TEV_BATCH_MAX' | 'TEV_BATCH_LANES' | 'TEV_RESPONSE_DEADLINE_MS'>;

/**
 * The request path's TEV settlement: `settle_tev` alone, or `settle_tev_batch` for the requests that waited while the
 * lanes were busy (`PostingQueue`).
 */
export class SettlementQueue extends PostingQueue<TevSubmission, Settlement> {
  constructor(em: EntityManager, config: SettlementQueueConfig) {
    super(em, {
      lanes: config.TEV_BATCH_LANES,
      batchMax: config.TEV_BATCH_MAX,
      deadlineMs: config.TEV_RESPONSE_DEADLINE_MS,
      accountsOf,
      one: (em, submission) => settleTev(em, config, submission, 'SUBMIT'),
      batch: (em, submissions) => settleTevBatch(em, config, submissions),
    });
  }

  /** Settles one TEV request (SUBMIT): the same answers as `settleTev`, alone or in a batch. */
  settle(submission: TevSubmission): Promise<Settlement> {
    return this.post(submission);
  }
}

/**
 * The accounts a request locks, as keys: the source, and the destination by id or by tenant, branch and account as
 * the client wrote them (`settle_tev` finds the account, holder_account_by_number in src/ledger/sql/rules.sql). One
 * account named two ways gets two keys; PostgreSQL's row locks still order those requests, this only keeps most
 * batches from waiting for each other.
 */
function accountsOf(submission: TevSubmission): string[] {
  const destination = submission.destination;
  if ('accountId' in destination) return [submission.sourceAccountId, destination.accountId];
  return [submission.sourceAccountId, `${submission.tenantId}/${destination.branch}/${destination.account}`];
}

