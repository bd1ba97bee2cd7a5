import type { EntityManager } from '@mikro-orm/postgresql';
import pg from 'pg';
import type { Config } from '../config.ts';
import { DeadlineExceeded } from '../shared/time.ts';
import type { TevSubmission } from '../../workflows/contracts/tev.ts';
import { settleTev, settleTevBatch, type Settlement } from './settlement.ts';

export type SettlementQueueConfig = Pick<Config, 'TEV_MAX_AMOUNT_CENTS' | 'TEV_BATCH_MAX' | 'TEV_BATCH_LANES' | 'TEV_RESPONSE_DEADLINE_MS'>;

interface Waiting {
  submission: TevSubmission;
  /** After this the caller has been answered `submitted_unknown` and the resolution workflow owns the transfer. */
  expiresAt: number;
  resolve(settled: Settlement): void;
  reject(err: unknown): void;
}

/**
 * The request path's settlement. At most `TEV_BATCH_LANES` settlement statements run at once; requests that arrive
 * while all lanes are busy wait, and leave together, up to `TEV_BATCH_MAX` at a time, as one `settle_tev_batch` call
 * (one transaction) when a lane frees. Under light load a request goes alone and at once; under load batches grow by
 * themselves, and one commit, one round trip and one database backend serve many transfers (measured on 2 cores:
 * 1,004 transfers/s as single calls from 32 connections, about 1,550 as batches of 4 from 8).
 */
export class SettlementQueue {
  /** The ORM's entity manager; each statement runs on a fork of it. */
  private readonly em: EntityManager;
  private readonly config: SettlementQueueConfig;
  private readonly waiting: Waiting[] = [];
  /** Source accounts of the batches in flight. */
  private readonly busySources = new Set<string>();
  private busyLanes = 0;

  constructor(em: EntityManager, config: SettlementQueueConfig) {
    this.em = em;
    this.config = config;
  }

  /** Settles one TEV request (SUBMIT): the same answers as `settleTev`, alone or in a batch. */
  settle(submission: TevSubmission): Promise<Settlement> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ submission, expiresAt: Date.now() + this.config.TEV_RESPONSE_DEADLINE_MS, resolve, reject });
      this.startBatches();
    });
  }

  private startBatches(): void {
    while (this.busyLanes < this.config.TEV_BATCH_LANES) {
      const batch = this.takeBatch();
      if (batch.length === 0) return;
      const sources = new Set(batch.map((w) => w.submission.sourceAccountId));
      for (const source of sources) this.busySources.add(source);
      this.busyLanes++;
      void this.run(batch).finally(() => {
        for (const source of sources) this.busySources.delete(source);
        this.busyLanes--;
        this.startBatches();
      });
    }
  }

  /**
   * The oldest waiting requests whose source account no running batch holds. A busy account's requests (a hot
   * account's, typically) wait for its batch to commit and then leave together: they settle one after the other in one
   * transaction instead of each batch queueing on that account's lock, and batches of other accounts run beside them.
   * Requests whose caller stopped waiting are left out: their resolution workflow settles them.
   */
  private takeBatch(): Waiting[] {
    const now = Date.now();
    const batch: Waiting[] = [];
    for (let i = 0; i < this.waiting.length && batch.length < this.config.TEV_BATCH_MAX; ) {
      const w = this.waiting[i]!;
      if (w.expiresAt <= now) {
        this.waiting.splice(i, 1);
        w.reject(new DeadlineExceeded('the TEV waited past its response deadline'));
      } else if (this.busySources.has(w.submission.sourceAccountId)) {
        i++;
      } else {
        this.waiting.splice(i, 1);
        batch.push(w);
      }
    }
    return batch;
  }

  private async run(batch: Waiting[]): Promise<void> {
    if (batch.length === 1) return this.settleAlone(batch[0]!);
    try {
      const settled = await settleTevBatch(this.em.fork(), this.config, batch.map((w) => w.submission));
      batch.forEach((w, i) => w.resolve(settled[i]!));
    } catch (err) {
      if (!rolledBack(err)) {
        // The connection failed or the answer was lost: each outcome is unknown, and each caller hands its own off.
        for (const w of batch) w.reject(err);
        return;
      }
      // The server refused the statement, so nothing of the batch was written: each request alone finds out whether
      // the refusal was its own (a deadlock with a changed fee schedule, say, or a defect one request triggers).
      await Promise.all(batch.map((w) => this.settleAlone(w)));
    }
  }

  /** One request in its own statement (`settle_tev`). */
  private settleAlone(w: Waiting): Promise<void> {
    return settleTev(this.em.fork(), this.config, w.submission, 'SUBMIT').then(w.resolve, w.reject);
  }
}

/**
 * Whether the server answered the statement with an ERROR: a single statement outside a transaction block is then
 * rolled back. A FATAL (the backend was terminated) or a broken connection says nothing about the commit.
 */
function rolledBack(err: unknown): boolean {
  return err instanceof pg.DatabaseError && err.severity === 'ERROR';
}
