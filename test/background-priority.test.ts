import { readFileSync } from 'node:fs';
import { expect, test } from '@jest/globals';
import { backgroundNice, spawnService } from '../scripts/lib/processes.ts';

/** A process's nice value: field 19 of /proc/<pid>/stat, counted after the command's name in parentheses. */
const niceOf = (pid: number) => Number(readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')[16]);
const autogroupOf = (pid: number) => {
  try {
    return readFileSync(`/proc/${pid}/autogroup`, 'utf8');
  } catch {
    return null;
  }
};

test('BACKGROUND_NICE: 10 unless set, 0 turns it off, anything but 0 to 19 refused', () => {
  expect(backgroundNice({})).toBe(10);
  expect(backgroundNice({ BACKGROUND_NICE: '0' })).toBe(0);
  expect(backgroundNice({ BACKGROUND_NICE: '19' })).toBe(19);
  for (const bad of ['20', '-5', '1.5', 'low', '']) expect(() => backgroundNice({ BACKGROUND_NICE: bad })).toThrow(/BACKGROUND_NICE must be a whole number from 0 to 19/);
});

test.each([
  { nice: 7, expected: 7 },
  { nice: 0, expected: 0 },
])('a service spawned with nice $nice runs at that priority, its scheduling group too', async ({ nice, expected }) => {
  const service = spawnService({ name: 'sleeper', command: process.execPath, args: ['-e', 'setInterval(() => undefined, 1000)'], nice });
  try {
    const pid = service.child.pid!;
    // `nice` replaces itself with the command: the pid is the service's once it runs the command. Until then its
    // arguments name the command too, but its first one is `nice`, and its priority may not be set yet.
    const program = () => readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')[0];
    for (let i = 0; i < 100 && program() !== process.execPath; i++) await new Promise((r) => setTimeout(r, 50));
    expect(program()).toBe(process.execPath);
    expect(niceOf(pid)).toBe(expected);
    // Its own session is its own autogroup (when the kernel has them), whose nice orders it against the other services.
    const autogroup = autogroupOf(pid);
    if (autogroup !== null) expect(autogroup).toMatch(new RegExp(`nice ${expected}\\s*$`));
  } finally {
    await service.stop();
  }
});
