/** `npm run migrate`: applies pending migrations to DATABASE_URL (the embedded server must be running if unset). */
import { loadConfigOrExit } from '../src/config.ts';
import { createLogger } from '../src/logger.ts';
import { openDatabase } from '../src/database.ts';
import { migrate } from '../src/persistence/orm.ts';

const config = loadConfigOrExit();
const orm = await openDatabase(config.DATABASE_URL, 2);
try {
  const applied = await migrate(orm, config.DATABASE_URL, createLogger(config.LOG_LEVEL, 'migrate'));
  process.stdout.write(`${JSON.stringify({ applied })}\n`);
} finally {
  await orm.close();
}
