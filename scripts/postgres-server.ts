/**
 * Runs the embedded PostgreSQL as its own process, so the supervisor (`npm start`, the test setup) can stop it last
 * and in order. Prints one JSON line `{"url": …}` when ready; SIGINT/SIGTERM stop the server cleanly.
 * Usage: node scripts/postgres-server.ts --data-dir ./data/pg --port 5433 --database banking [--fresh]
 */
import { parseArgs } from 'node:util';
import { EMBEDDED_DATABASE } from '../src/config.ts';
import { startEmbeddedPostgres } from './lib/embedded-postgres.ts';

const { values } = parseArgs({
  options: {
    'data-dir': { type: 'string', default: './data/pg' },
    port: { type: 'string', default: String(EMBEDDED_DATABASE.port) },
    database: { type: 'string', default: EMBEDDED_DATABASE.database },
    fresh: { type: 'boolean', default: false },
  },
});

const db = await startEmbeddedPostgres({
  dataDir: values['data-dir'],
  port: Number(values.port),
  user: EMBEDDED_DATABASE.user,
  password: EMBEDDED_DATABASE.password,
  database: values.database,
  fresh: values.fresh,
  log: (line) => process.stderr.write(`${line}\n`),
});
process.stdout.write(`${JSON.stringify({ url: db.url })}\n`);
// embedded-postgres installs exit hooks that stop the server on SIGINT/SIGTERM; keep the process alive until then.
setInterval(() => undefined, 1 << 30);
