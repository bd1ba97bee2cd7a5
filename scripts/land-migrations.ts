/**
 * `npm run migrations:land`: appends the migrations not yet in src/persistence/migrations/landed.json, with their
 * checksums. Run it when a new migration is committed; it never rewrites an entry that is there (the test that
 * compares them fails instead, see src/persistence/landed-migrations.ts).
 */
import { existsSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import {
  appendNewMigrations,
  LANDED_MANIFEST,
  landedMigrationProblems,
  MIGRATIONS_DIR,
  readLandedManifest,
  readMigrationTexts,
} from '../src/persistence/landed-migrations.ts';

const texts = readMigrationTexts(fileURLToPath(MIGRATIONS_DIR));
const manifest = existsSync(LANDED_MANIFEST) ? readLandedManifest(fileURLToPath(LANDED_MANIFEST)) : [];
const problems = landedMigrationProblems(texts, manifest);
if (problems.length > 0) {
  process.stderr.write(`${problems.join('\n')}\n`);
  process.exit(1);
}
const next = appendNewMigrations(texts, manifest);
writeFileSync(LANDED_MANIFEST, `${JSON.stringify(next, null, 2)}\n`);
process.stdout.write(`${JSON.stringify({ landed: next.slice(manifest.length).map((m) => m.name) })}\n`);
