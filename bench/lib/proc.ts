import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

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
function statFields(pid: number): { ppid: number; ticks: number } {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // The command name (field 2) is in parentheses and may hold spaces: count the fields after its closing one.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { ppid: Number(fields[1]), ticks: Number(fields[11]) + Number(fields[12]) };
}

const clockTicksPerSecond = (() => {
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
