/**
 * The outbox relay's cursor on the run's database (`takeCommittedEvents`, the look the worker's relay makes in each of
 * its transactions): every committed event is taken exactly once, an aborted transaction's never, and a long write
 * transaction holds back only its own events, not those committed after it began. Each test follows a cursor of its
 * own, so the webhooks relay of other test files' workers never shares it; events of other files pass it too, and only
 * the test's own are asserted.
 */
import { randomInt, randomUUID } from 'node:crypto';
import { afterAll, describe, expect, test } from '@jest/globals';
import pg from 'pg';
import { takeCommittedEvents } from '../../src/events/outbox.ts';
import { sql } from '../support/db.ts';
import { domainDatabase } from './support/accounts.ts';

const db = domainDatabase();
const clients: pg.Client[] = [];
afterAll(async () => {
  await Promise.all(clients.map((c) => c.end()));
});

/** A connection of its own, for a transaction held open across the relay's looks. */
async function connection(): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
  await client.connect();
  clients.push(client);
  return client;
}

/** A cursor of its own, starting where every transaction below it has ended (as migration 1100's did, at zero). */
async function newRelay(): Promise<string> {
  const relay = `test-${randomUUID()}`;
  await sql(`insert into event_relay_cursor (relay, txid, seq) values ($1, pg_snapshot_xmin(pg_current_snapshot()), 0)`, [relay]);
  return relay;
}

/** Inserts an event on `on` (its transaction, if one is open) and answers its id. */
async function insertEvent(on: pg.Client | null): Promise<string> {
  const id = randomUUID();
  const text = `insert into event_outbox (id, tenant_id, account_id, pix_account_id, type, data) values ($1, $2, $2, 'relay-test', 'test.event', '{}')`;
  if (on) await on.query(text, [id, randomUUID()]);
  else await sql(text, [id, randomUUID()]);
  return id;
}

/** The relay's looks until one finds nothing: the ids taken, in order. */
async function drain(relay: string): Promise<string[]> {
  const taken: string[] = [];
  for (;;) {
    const events = await db.em().transactional((em) => takeCommittedEvents(em, relay, 50));
    if (events === null) throw new Error('the cursor is held by another look');
    if (events.length === 0) return taken;
    taken.push(...events.map((e) => e.id));
  }
}

const mine = (taken: string[], ids: string[]) => taken.filter((id) => ids.includes(id));

describe('the outbox relay', () => {
  test('an event committed while a long transaction runs is taken at once; the long one\'s events when it commits, once', async () => {
    const relay = await newRelay();
    const long = await connection();
    await long.query('begin');
    const l1 = await insertEvent(long);
    const a = await insertEvent(null);

    expect(mine(await drain(relay), [l1, a])).toEqual([a]);

    const l2 = await insertEvent(long);
    await long.query('commit');
    const b = await insertEvent(null);
    expect(mine(await drain(relay), [l1, l2, a, b]).sort()).toEqual([l1, l2, b].sort());
    expect(mine(await drain(relay), [l1, l2, a, b])).toEqual([]);
  });

  test('a long transaction that rolls back leaves no event, and the cursor stops keeping it', async () => {
    const relay = await newRelay();
    const long = await connection();
    await long.query('begin');
    const x = await insertEvent(long);
    const { txid } = (await long.query<{ txid: string }>('select pg_current_xact_id()::text as txid')).rows[0]!;
    const a = await insertEvent(null);
    expect(mine(await drain(relay), [x, a])).toEqual([a]);
    expect((await sql(`select running::text[] as running from event_relay_cursor where relay = $1`, [relay]))[0].running).toContain(txid);

    await long.query('rollback');
    const b = await insertEvent(null);
    expect(mine(await drain(relay), [x, a, b])).toEqual([b]);
    expect((await sql(`select running::text[] as running from event_relay_cursor where relay = $1`, [relay]))[0].running).not.toContain(txid);
  });

  test('while one look holds the cursor, another takes nothing', async () => {
    const relay = await newRelay();
    const a = await insertEvent(null);
    await db.em().transactional(async (first) => {
      expect(mine((await takeCommittedEvents(first, relay, 50))!.map((e) => e.id), [a])).toEqual([a]);
      expect(await db.em().transactional((second) => takeCommittedEvents(second, relay, 50))).toBeNull();
    });
  });

  test('writers committing and rolling back in any order while the relay looks: each committed event taken once, no other', async () => {
    const relay = await newRelay();
    const committed: string[] = [];
    const rolledBack: string[] = [];
    const taken: string[] = [];
    let writing = true;
    const looks = (async () => {
      while (writing) taken.push(...(await drain(relay)));
      taken.push(...(await drain(relay)));
    })();
    const writers = Array.from({ length: 12 }, async () => {
      const client = await connection();
      for (let round = 0; round < 5; round++) {
        await client.query('begin');
        const ids = [await insertEvent(client)];
        await new Promise((r) => setTimeout(r, randomInt(0, 40)));
        ids.push(await insertEvent(client));
        if (randomInt(4) === 0) {
          await client.query('rollback');
          rolledBack.push(...ids);
        } else {
          await client.query('commit');
          committed.push(...ids);
        }
      }
    });
    await Promise.all(writers);
    writing = false;
    await looks;
    const ours = mine(taken, [...committed, ...rolledBack]);
    expect(ours.length).toBe(new Set(ours).size);
    expect(ours.sort()).toEqual([...committed].sort());
  });
});
