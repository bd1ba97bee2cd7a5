/**
 * The credential cache against a real PostgreSQL: what it keeps, what a committed NOTIFY makes it forget (an entry and
 * the parts kept with it), and its bound.
 */
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { pino } from 'pino';
import { createCredentialCache, REVOCATION_CHANNEL, type CredentialCache, type CredentialRef } from '../src/tenants/credential-cache.ts';
import { closeDb, sql } from './support/db.ts';

let cache: CredentialCache;

/** Counts its calls, answering `value`. */
function loader<T>(value: T) {
  const load = async () => {
    load.calls++;
    return value;
  };
  load.calls = 0;
  return load;
}

beforeAll(async () => {
  cache = createCredentialCache(process.env.TEST_DATABASE_URL!, pino({ level: 'silent' }));
  // Nothing is kept until its listening connection is up.
  const probe = loader('up');
  for (let i = 0; i < 200; i++) {
    const calls = probe.calls;
    await cache.get('pak:probe', probe);
    if (probe.calls === calls) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error('the cache never started listening');
});

afterAll(async () => {
  await cache?.close();
  await closeDb();
});

/** Notifies `ref` and waits until a marker notified after it has been heard (forgotten). */
async function announce(ref: CredentialRef): Promise<void> {
  await sql('select pg_notify($1, $2)', [REVOCATION_CHANNEL, ref]);
  const marker = `pak:marker-${Math.random()}` as CredentialRef;
  const load = loader('marker');
  await cache.get(marker, load);
  await sql('select pg_notify($1, $2)', [REVOCATION_CHANNEL, marker]);
  for (let i = 0; i < 200; i++) {
    const calls = load.calls;
    await cache.get(marker, load);
    if (load.calls > calls) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error('the marker was never heard');
}

test('a holder and its parts are kept until a change of it is announced; another holder stays', async () => {
  const holder = loader({ id: 'h1' });
  const account = loader({ id: 'a1' });
  const other = loader({ id: 'h2' });
  for (let i = 0; i < 3; i++) {
    await cache.get('hld:h1', holder);
    await cache.getPart('hld:h1', 'a1', account);
    await cache.get('hld:h2', other);
  }
  expect([holder.calls, account.calls, other.calls]).toEqual([1, 1, 1]);

  await announce('hld:h1');
  await cache.get('hld:h1', holder);
  await cache.getPart('hld:h1', 'a1', account);
  await cache.get('hld:h2', other);
  expect([holder.calls, account.calls, other.calls]).toEqual([2, 2, 1]);
});

test('a part is not kept without its entry, and a null is not kept when asked so', async () => {
  const account = loader({ id: 'a9' });
  await cache.getPart('hld:nobody', 'a9', account);
  await cache.getPart('hld:nobody', 'a9', account);
  expect(account.calls).toBe(2);

  const missing = loader(null);
  await cache.get('hld:missing', missing, { keepNull: false });
  await cache.get('hld:missing', missing, { keepNull: false });
  expect(missing.calls).toBe(2);
});

test('past its bound the oldest entry is forgotten first', async () => {
  const first = loader('first');
  await cache.get('hld:oldest', first);
  for (let i = 0; i < 10_000; i++) await cache.get(`hld:filler-${i}`, async () => i);
  await cache.get('hld:oldest', first);
  expect(first.calls).toBe(2);
});
