import { existsSync, readFileSync } from 'node:fs';
import { basename, dirname } from 'node:path';
import { expect, test } from '@jest/globals';
import { backgroundCpuGroup, backgroundNice, spawnService } from '../scripts/lib/processes.ts';

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

test('BACKGROUND_IDLE: 1 unless set, 0 makes no cpu cgroup, anything but 0 or 1 refused', () => {
  expect(backgroundCpuGroup({})).toBe(backgroundCpuGroup({ BACKGROUND_IDLE: '1' }));
  expect(backgroundCpuGroup({ BACKGROUND_IDLE: '0' })).toBeNull();
  for (const bad of ['2', 'yes', 'true', '']) expect(() => backgroundCpuGroup({ BACKGROUND_IDLE: bad })).toThrow(/BACKGROUND_IDLE must be 0 or 1/);
});

/** The cpu cgroup a process is in: cgroup v1's `cpu` line of /proc/<pid>/cgroup, or v2's single one. */
const cpuCgroupOf = (pid: number) => {
  const lines = readFileSync(`/proc/${pid}/cgroup`, 'utf8').trim().split('\n');
  const v1 = lines.find((line) => line.split(':')[1]!.split(',').includes('cpu'));
  return (v1 ?? lines.find((line) => line.startsWith('0::'))!).split(':')[2];
};

test('BACKGROUND_IDLE (1 by default): a service spawned into the background cpu cgroup runs there, and the group is idle (where this machine lets a cgroup be made)', async () => {
  const procs = backgroundCpuGroup({});
  // Root with cgroup v1's cpu hierarchy (this machine, and CI on it): the group is made. Elsewhere it may not be.
  if (process.getuid?.() === 0 && existsSync('/sys/fs/cgroup/cpu/cpu.shares')) expect(procs).not.toBeNull();
  if (!procs) return;
  const group = dirname(procs);
  expect(readFileSync(`${group}/cpu.idle`, 'utf8').trim()).toBe('1');
  const service = spawnService({ name: 'sleeper', command: process.execPath, args: ['-e', 'setInterval(() => undefined, 1000)'], cpuGroup: procs });
  try {
    const pid = service.child.pid!;
    expect(cpuCgroupOf(pid)).toBe(`/${basename(group)}`);
    expect(readFileSync(procs, 'utf8').split('\n')).toContain(String(pid));
    expect(cpuCgroupOf(process.pid)).not.toBe(`/${basename(group)}`);
  } finally {
    await service.stop();
  }
});
