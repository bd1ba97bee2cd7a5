import { afterAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { startEmbeddedPostgres } from '../scripts/lib/embedded-postgres.ts';

/**
 * `npm start` twice on the same ./data: the second start finds the cluster the first one created and serves it. As
 * root, the first start once gave the data directory the search bit for others, and PostgreSQL then refused it.
 */
describe('embedded PostgreSQL', () => {
  const root = mkdtempSync(join(tmpdir(), 'embedded-pg-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('starts again on the cluster an earlier start created, its data kept', async () => {
    const options = { dataDir: join(root, 'pg'), port: 5491, user: 'postgres', password: 'postgres', database: 'restart' };
    const first = await startEmbeddedPostgres(options);
    const write = new pg.Client({ connectionString: first.url });
    await write.connect();
    await write.query('create table kept (n int); insert into kept values (42)');
    await write.end();
    await first.stop();

    expect(statSync(options.dataDir).mode & 0o077).toBe(0);
    const second = await startEmbeddedPostgres(options);
    try {
      const read = new pg.Client({ connectionString: second.url });
      await read.connect();
      expect((await read.query('select n from kept')).rows).toEqual([{ n: 42 }]);
      await read.end();
    } finally {
      await second.stop();
    }
  }, 120_000);
});
