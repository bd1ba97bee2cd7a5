/** `npm run temporal:search-attributes`: registers the platform's custom search attributes (the worker also does at start). */
import { loadConfigOrExit } from '../src/config.ts';
import { connectTemporal, ensureSearchAttributes } from '../src/temporal/connection.ts';

const config = loadConfigOrExit();
const { connection } = await connectTemporal(config);
try {
  process.stdout.write(`${JSON.stringify({ added: await ensureSearchAttributes(connection, config.TEMPORAL_NAMESPACE) })}\n`);
} finally {
  await connection.close();
}
