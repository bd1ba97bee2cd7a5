/** `npm run temporal:ensure`: prints the path of the Temporal CLI, building it with Go when it is missing. */
import { ensureTemporalBinary } from './lib/temporal-binary.ts';

try {
  process.stdout.write(`${ensureTemporalBinary((line) => process.stderr.write(`${line}\n`))}\n`);
} catch (err) {
  process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
}
