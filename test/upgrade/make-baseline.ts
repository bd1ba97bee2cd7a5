/**
 * `node test/upgrade/make-baseline.ts [commit]` (default: main): builds a baseline for the upgrade test from a landed
 * version. It checks the commit out beside this tree, runs that version's platform (its own test setup: embedded
 * PostgreSQL, Temporal dev server, api, worker, sandbox PSP) through `seed.ts`, and writes what its database holds to
 * test/upgrade/baselines/<commit>/ (see dump.ts). Run it when a release lands, and commit the folder.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '../..');
const git = (...args: string[]) => execFileSync('git', args, { cwd: root, encoding: 'utf8' }).trim();
const commit = git('rev-parse', process.argv[2] ?? 'main');
const out = join(root, 'test/upgrade/baselines', `${git('show', '-s', '--format=%cs', commit)}-${commit.slice(0, 10)}`);
const tree = mkdtempSync(join(tmpdir(), 'upgrade-baseline-'));
// The embedded PostgreSQL runs as its own user, which must reach its data directory inside the tree.
chmodSync(tree, 0o755);

git('worktree', 'add', '--detach', tree, commit);
try {
  symlinkSync(join(root, 'node_modules'), join(tree, 'node_modules'));
  mkdirSync(join(tree, 'test/upgrade'), { recursive: true });
  // The seed and the dump are this tree's; they use only what that version's test support already had.
  for (const file of ['seed.ts', 'dump.ts']) copyFileSync(join(root, 'test/upgrade', file), join(tree, 'test/upgrade', file));
  writeFileSync(
    join(tree, 'test/upgrade/make-baseline.test.ts'),
    `import { readFunctionSources } from '../../src/persistence/functions.ts';
import { startPlatform } from '../support/platform.ts';
import { dumpBaseline } from './dump.ts';
import { seedPlatformEnv, seedRealisticData } from './seed.ts';

it('seeds a platform of this version and dumps its database', async () => {
  const platform = await startPlatform(seedPlatformEnv());
  try {
    await seedRealisticData(platform);
  } finally {
    await platform.stop();
  }
  const texts = new Map(readFunctionSources().map((f) => [f.name, f.sql]));
  await dumpBaseline(process.env.TEST_DATABASE_URL!, ${JSON.stringify(out)}, ${JSON.stringify(commit)}, texts);
}, 900_000);
`,
  );
  execFileSync(process.execPath, ['--experimental-vm-modules', 'node_modules/jest/bin/jest.js', 'test/upgrade/make-baseline.test.ts'], { cwd: tree, stdio: 'inherit' });
  process.stdout.write(`${JSON.stringify({ baseline: out })}\n`);
} finally {
  git('worktree', 'remove', '--force', tree);
  rmSync(tree, { recursive: true, force: true });
}
