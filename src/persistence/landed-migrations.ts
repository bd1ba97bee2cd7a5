import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * A migration never changes once it has landed: a database that already ran it would never run the new text, so an
 * upgraded database would silently differ from a fresh one (issue 24 found rules missing that way). `landed.json`
 * records the SHA-256 of each migration's text as it landed, in landing order; entries are only ever appended
 * (`npm run migrations:land`). `checkLandedMigrations` compares the folder with it.
 */
export interface LandedMigration {
  name: string;
  sha256: string;
}

export const MIGRATIONS_DIR = new URL('./migrations/', import.meta.url);
export const LANDED_MANIFEST = new URL('./migrations/landed.json', import.meta.url);

const MIGRATION_FILE = /^(Migration\d{14}_[a-z0-9_]+)\.ts$/;

export const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

/** Every migration file of a folder, by name, with its text. */
export function readMigrationTexts(dir: string): Map<string, string> {
  const texts = new Map<string, string>();
  for (const file of readdirSync(dir).sort()) {
    const name = MIGRATION_FILE.exec(file)?.[1];
    if (name) texts.set(name, readFileSync(join(dir, file), 'utf8'));
  }
  return texts;
}

export function readLandedManifest(path: string): LandedMigration[] {
  return JSON.parse(readFileSync(path, 'utf8')) as LandedMigration[];
}

/**
 * What is wrong between the migrations and the manifest, one line each; empty when they agree. A landed migration
 * must be there with its landed text, a migration not yet landed must sort after every landed one (MikroORM runs them
 * by name: an older name would run out of order on upgraded databases), and the manifest must stay in name order.
 */
export function landedMigrationProblems(texts: Map<string, string>, manifest: readonly LandedMigration[]): string[] {
  const problems: string[] = [];
  manifest.forEach((entry, i) => {
    const previous = manifest[i - 1];
    if (previous && previous.name >= entry.name) problems.push(`landed.json: ${entry.name} is not after ${previous.name}; the manifest is append-only, in name order`);
    const text = texts.get(entry.name);
    if (text === undefined) problems.push(`${entry.name} landed and is gone: a landed migration is never deleted`);
    else if (sha256(text) !== entry.sha256) problems.push(`${entry.name} changed after it landed: revert it and put the change in a new migration`);
  });
  const lastLanded = manifest.at(-1)?.name ?? '';
  const landed = new Set(manifest.map((m) => m.name));
  for (const name of texts.keys()) {
    if (!landed.has(name) && name <= lastLanded) problems.push(`${name} is new but sorts before the landed ${lastLanded}: give it a later timestamp`);
  }
  return problems;
}

/** The manifest with the migrations not yet in it appended, in name order; landed entries are kept as they are. */
export function appendNewMigrations(texts: Map<string, string>, manifest: readonly LandedMigration[]): LandedMigration[] {
  const landed = new Set(manifest.map((m) => m.name));
  const added = [...texts].filter(([name]) => !landed.has(name)).map(([name, text]) => ({ name, sha256: sha256(text) }));
  return [...manifest, ...added];
}
