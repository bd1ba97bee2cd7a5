import type { EntityManager } from '@mikro-orm/postgresql';
import { queryPrepared } from './prepared.ts';

/** At most this many statements of one read at once, each on a pool connection. */
const LANES = 4;
/** The most reads one statement answers. */
const BATCH_MAX = 32;

/** A read by key that the request path makes at every request (`BatchedRead`). */
export interface BatchedReadKind {
  /** The prepared statement's name; the batch's is this with `_many`. */
  name: string;
  /** One read: the key's parts as `$1`, `$2`… in order; at most one row. */
  one(em: EntityManager): string;
  /**
   * Several reads: the key's parts as arrays `$1`, `$2`… (typed, e.g. `$1::uuid[]`), each read's rows with its 1-based
   * position in them as `ord`. Each key's row read by a lateral lookup on its key, not a join: a prepared statement is
   * planned once for its connection, and a join planned on a small table's statistics reads the whole table.
   */
  many(em: EntityManager): string;
}

interface Waiting {
  key: unknown[];
  resolve(row: Record<string, unknown> | undefined): void;
  reject(err: unknown): void;
}

type Pool = { query(q: { name: string; text: string; values: unknown[] }): Promise<{ rows: Record<string, unknown>[] }> };

/**
 * Reads of one kind on one pool. A read that finds a free lane goes at once, alone, as a named prepared statement;
 * reads that arrive while every lane is busy wait and leave together as one statement. The posting queues' way
 * (src/ledger/posting-queue.ts), for reads: under load one round trip and one statement serve many requests, and a
 * read alone costs what it did. A batch the server refuses (one read's malformed key, say) is read again one key at a
 * time, so each read gets its own answer.
 */
class ReadLanes {
  private readonly waiting: Waiting[] = [];
  private busy = 0;
  private readonly pool: Pool;
  private readonly name: string;
  private readonly oneText: string;
  private readonly manyText: string;

  constructor(pool: Pool, name: string, oneText: string, manyText: string) {
    this.pool = pool;
    this.name = name;
    this.oneText = oneText;
    this.manyText = manyText;
  }

  read(key: unknown[]): Promise<Record<string, unknown> | undefined> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ key, resolve, reject });
      this.start();
    });
  }

  private start(): void {
    while (this.busy < LANES && this.waiting.length > 0) {
      const batch = this.waiting.splice(0, BATCH_MAX);
      this.busy++;
      void this.run(batch).finally(() => {
        this.busy--;
        this.start();
      });
    }
  }

  private async run(batch: Waiting[]): Promise<void> {
    if (batch.length === 1) return this.readAlone(batch[0]!);
    let rows: Record<string, unknown>[];
    try {
      const columns = batch[0]!.key.map((_, part) => batch.map((w) => w.key[part]));
      rows = (await this.pool.query({ name: `${this.name}_many`, text: this.manyText, values: columns })).rows;
    } catch {
      await Promise.all(batch.map((w) => this.readAlone(w)));
      return;
    }
    const byPosition = new Map(rows.map(({ ord, ...row }) => [Number(ord), row]));
    batch.forEach((w, i) => w.resolve(byPosition.get(i + 1)));
  }

  private async readAlone(w: Waiting): Promise<void> {
    try {
      w.resolve((await this.pool.query({ name: this.name, text: this.oneText, values: w.key })).rows[0]);
    } catch (err) {
      w.reject(err);
    }
  }
}

/** Each pool's lanes, by read. */
const lanesByPool = new WeakMap<object, Map<string, ReadLanes>>();

/**
 * One row by key, read as `kind` says, batched with the concurrent reads of the same kind (`ReadLanes`). Inside a
 * transaction it runs alone on the transaction's connection, where it sees what the transaction wrote.
 */
export async function readBatched(em: EntityManager, kind: BatchedReadKind, key: unknown[]): Promise<Record<string, unknown> | undefined> {
  if (em.getTransactionContext()) return (await queryPrepared<Record<string, unknown>>(em, kind.name, kind.one(em), key))[0];
  const pool = (await em.getConnection().getNativeClient()) as unknown as Pool & object;
  let lanes = lanesByPool.get(pool);
  if (lanes === undefined) lanesByPool.set(pool, (lanes = new Map()));
  let read = lanes.get(kind.name);
  if (read === undefined) lanes.set(kind.name, (read = new ReadLanes(pool, kind.name, kind.one(em), kind.many(em))));
  return read.read(key);
}
