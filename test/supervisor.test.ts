import { expect, test } from '@jest/globals';
import { spawnService, type ManagedProcess } from '../scripts/lib/processes.ts';
import { createSupervisor } from '../scripts/lib/supervisor.ts';
import { waitFor } from './support/fixtures.ts';

test('npm start keeps a crashed service running: restarted with backoff and logged; only stopAll stops it', async () => {
  const lines: string[] = [];
  const supervisor = createSupervisor((line) => lines.push(line));
  const started: ManagedProcess[] = [];
  await supervisor.keep({
    name: 'sleeper',
    async start() {
      const p = spawnService({ name: 'sleeper', command: process.execPath, args: ['-e', 'setInterval(() => undefined, 1000)'] });
      started.push(p);
      return p;
    },
  });
  expect(started).toHaveLength(1);

  started[0]!.child.kill('SIGKILL');
  await waitFor(async () => started.length === 2, 10_000, 'first restart');
  started[1]!.child.kill('SIGKILL');
  const secondCrash = Date.now();
  await waitFor(async () => started.length === 3, 10_000, 'second restart');
  // The second crash in a row waits longer: 1 s, then 2 s.
  expect(Date.now() - secondCrash).toBeGreaterThanOrEqual(1900);
  expect(lines.filter((l) => l.includes('sleeper exited'))).toHaveLength(2);
  expect(lines).toContain('sleeper restarted');

  await supervisor.stopAll();
  expect(started[2]!.child.exitCode !== null || started[2]!.child.signalCode !== null).toBe(true);
  await new Promise((r) => setTimeout(r, 1500));
  expect(started).toHaveLength(3);
}, 30_000);
