import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';

/** Processes of this machine read from /proc (Linux): who they are and how much CPU they used. */

export interface Proc {
  pid: number;
  ppid: number;
  /** The command line, arguments joined by spaces. */
  command: string;
}

/** Every process whose command line could be read (others may have exited meanwhile). */
export function processes(): Proc[] {
  const found: Proc[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const command = readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0').join(' ').trim();
      if (command) found.push({ pid: Number(name), ppid: statFields(Number(name)).ppid, command });
    } catch {
      // exited between the listing and the read
    }
  }
  return found;
}

/** /proc/<pid>/stat: the parent, and user plus system CPU of all the process's threads in clock ticks. */
export function statFields(pid: number): { ppid: number; ticks: number } {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // The command name (field 2) is in parentheses and may hold spaces: count the fields after its closing one.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { ppid: Number(fields[1]), ticks: Number(fields[11]) + Number(fields[12]) };
}

export const clockTicksPerSecond = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/** Each process's CPU over the next `seconds`, in % of one core (NaN for a process that exited meanwhile). */
export async function cpuOver(pids: number[], seconds: number): Promise<Map<number, number>> {
  const ticks = (pid: number) => {
    try {
      return statFields(pid).ticks;
    } catch {
      return NaN;
    }
  };
  const before = new Map(pids.map((pid) => [pid, ticks(pid)]));
  const start = performance.now();
  await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
  const elapsed = (performance.now() - start) / 1000;
  return new Map(pids.map((pid) => [pid, ((ticks(pid) - before.get(pid)!) / clockTicksPerSecond / elapsed) * 100]));
}

/** The platform's processes by what they are, and this machine's CPU: where a phase's CPU went. */
export const ROLES = ['api', 'postgres', 'temporal', 'worker', 'psp', 'bench', 'other'] as const;
export type Role = (typeof ROLES)[number];

/** Which part of the platform a process is, from its command line (and, for PostgreSQL's backends, its parent's). */
function roleOf(p: Proc, byPid: Map<number, Proc>): Role {
  if (p.pid === process.pid) return 'bench';
  if (/ src\/main\.ts( |$)/.test(p.command)) return 'api';
  if (p.command.includes('worker/main.ts')) return 'worker';
  if (p.command.includes('sandbox/psp/main.ts')) return 'psp';
  if (/ server start-dev /.test(p.command) || /temporal-server/.test(p.command)) return 'temporal';
  const parent = byPid.get(p.ppid);
  if (/\/bin\/postgres /.test(p.command) || (p.command.startsWith('postgres:') && parent && /\/bin\/postgres /.test(parent.command))) return 'postgres';
  return 'other';
}

export interface CpuSnapshot {
  at: number;
  /** Ticks of each process that was running, with its role. */
  ticks: Map<number, { role: Role; ticks: number }>;
  /** The whole machine's busy ticks (all CPUs), from /proc/stat. */
  machineBusy: number;
}

export function cpuSnapshot(): CpuSnapshot {
  const all = processes();
  const byPid = new Map(all.map((p) => [p.pid, p]));
  const ticks = new Map<number, { role: Role; ticks: number }>();
  for (const p of all) {
    try {
      ticks.set(p.pid, { role: roleOf(p, byPid), ticks: statFields(p.pid).ticks });
    } catch {
      // exited meanwhile
    }
  }
  const cpu = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  // user nice system idle iowait irq softirq steal: busy is all but idle and iowait.
  const machineBusy = cpu.slice(0, 8).reduce((a, b) => a + b, 0) - cpu[3]! - cpu[4]!;
  return { at: performance.now(), ticks, machineBusy };
}

/**
 * The CPU each role used between two snapshots, in % of one core, and the machine's. A process started in between
 * counts from zero; one that exited in between is lost (PostgreSQL's pool backends live as long as the platform).
 */
export function cpuBetween(before: CpuSnapshot, after: CpuSnapshot): { byRole: Map<Role, number>; machine: number } {
  const seconds = (after.at - before.at) / 1000;
  const percent = (ticks: number) => (ticks / clockTicksPerSecond / seconds) * 100;
  const byRole = new Map<Role, number>(ROLES.map((r) => [r, 0]));
  for (const [pid, now] of after.ticks) {
    const used = now.ticks - (before.ticks.get(pid)?.ticks ?? 0);
    byRole.set(now.role, byRole.get(now.role)! + percent(used));
  }
  return { byRole, machine: percent(after.machineBusy - before.machineBusy) };
}

/** `api 61% · postgres 80% · … · machine 190% of 200%`. */
export function describeCpu(cpu: { byRole: Map<Role, number>; machine: number }): string {
  const parts = ROLES.map((r) => `${r} ${cpu.byRole.get(r)!.toFixed(0)}%`);
  return `${parts.join(' · ')} · machine ${cpu.machine.toFixed(0)}% of ${os.cpus().length * 100}%`;
}
