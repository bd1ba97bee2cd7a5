import { describe, expect, it } from '@jest/globals';
import { fileURLToPath } from 'node:url';
import {
  appendNewMigrations,
  LANDED_MANIFEST,
  landedMigrationProblems,
  MIGRATIONS_DIR,
  readLandedManifest,
  readMigrationTexts,
  sha256,
} from '../src/persistence/landed-migrations.ts';
import { migrations } from '../src/persistence/migrations/index.ts';

const texts = readMigrationTexts(fileURLToPath(MIGRATIONS_DIR));
const manifest = readLandedManifest(fileURLToPath(LANDED_MANIFEST));

describe('landed migrations never change', () => {
  it('every landed migration has the text it landed with', () => {
    expect(landedMigrationProblems(texts, manifest)).toEqual([]);
  });

  it('every migration of the folder is landed in the manifest and registered to run', () => {
    expect(appendNewMigrations(texts, manifest).map((m) => m.name)).toEqual(manifest.map((m) => m.name));
    expect(migrations.map((m) => m.name)).toEqual([...texts.keys()]);
  });

  it('fails on an edited migration, a deleted one, one slipped in before the landed ones, and a rewritten manifest', () => {
    const [first, second] = manifest;
    const edited = new Map(texts).set(second!.name, `${texts.get(second!.name)}\n// one more line\n`);
    expect(landedMigrationProblems(edited, manifest)).toEqual([`${second!.name} changed after it landed: revert it and put the change in a new migration`]);

    const deleted = new Map(texts);
    deleted.delete(first!.name);
    expect(landedMigrationProblems(deleted, manifest)).toEqual([`${first!.name} landed and is gone: a landed migration is never deleted`]);

    const early = new Map(texts).set('Migration20261122000150_slipped_in', 'export {};');
    expect(landedMigrationProblems(early, manifest)).toEqual([
      `Migration20261122000150_slipped_in is new but sorts before the landed ${manifest.at(-1)!.name}: give it a later timestamp`,
    ]);

    const reordered = [second!, first!, ...manifest.slice(2)];
    expect(landedMigrationProblems(texts, reordered)).toContain(`landed.json: ${first!.name} is not after ${second!.name}; the manifest is append-only, in name order`);
  });

  it('appends a new migration with its checksum and keeps every landed entry as it is', () => {
    const added = new Map(texts).set('Migration20991231000000_later', 'export {};');
    expect(appendNewMigrations(added, manifest)).toEqual([...manifest, { name: 'Migration20991231000000_later', sha256: sha256('export {};') }]);
  });
});
