import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, test } from '@jest/globals';
import ts from 'typescript';

// The sandbox stands for the outside world and lives in src/sandbox/ alone: production code imports none of it, but
// for the wiring that mounts it when SANDBOX=1; and its stand-ins reach the platform through use cases, never stores.

const ROOT = resolve(import.meta.dirname, '..');
const SANDBOX = 'src/sandbox/';
/** The wiring: the holder app mounts the sandbox routes, the api's entry point loads its TEV outcomes (both SANDBOX=1 only). */
const WIRING = ['src/api/holder-app.ts', 'src/main.ts'];

function sourceFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts'))
    .map((f) => join(dir, f));
}

/** The project files a file imports, static, type-only and dynamic imports alike, relative to the project's root. */
function importsOf(file: string): string[] {
  const { importedFiles } = ts.preProcessFile(readFileSync(join(ROOT, file), 'utf8'), true, true);
  return importedFiles
    .map((i) => i.fileName)
    .filter((name) => name.startsWith('.'))
    .map((name) => relative(ROOT, resolve(ROOT, dirname(file), name)));
}

const PRODUCTION = ['src', 'workflows', 'activities', 'worker', 'scripts'].flatMap(sourceFiles).filter((f) => !f.startsWith(SANDBOX));

describe('the sandbox boundary', () => {
  test('outside src/sandbox/, only the wiring imports it', () => {
    const importers = PRODUCTION.filter((f) => importsOf(f).some((i) => i.startsWith(SANDBOX)));
    expect(importers.sort()).toEqual([...WIRING].sort());
  });

  test("the sandbox's stand-ins import no store of the platform", () => {
    const reaches = sourceFiles(SANDBOX).flatMap((f) => importsOf(f).filter((i) => !i.startsWith(SANDBOX) && /(^|[/-])store\.ts$/.test(i)).map((i) => `${f} -> ${i}`));
    expect(reaches).toEqual([]);
  });
});
