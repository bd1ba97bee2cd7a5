import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createInterface } from 'node:readline';

export interface ManagedProcess {
  name: string;
  child: ChildProcess;
  exited: Promise<number | null>;
  stop(timeoutMs?: number): Promise<void>;
}

export interface SpawnOptions {
  name: string;
  command: string;
  args: string[];
  env?: NodeJS.ProcessEnv;
  /** Called with every line the process writes (stdout and stderr). */
  onLine?: (line: string, stream: 'stdout' | 'stderr') => void;
  /**
   * The process writes to the supervisor's own stdout and stderr, with no copy through the supervisor: for services
   * that log a JSON line per request (each line names its service), where the copy cost CPU under load.
   */
  inheritOutput?: boolean;
  /**
   * A lower CPU priority (a nice value, 1 to 19; 0 or absent: the default), for a service that works in the background
   * beside the request path on the same machine (`backgroundNice`).
   */
  nice?: number;
  /**
   * A cpu cgroup's `cgroup.procs` file the service joins as soon as it is spawned, with all its threads and the
   * processes it starts later (`backgroundCpuGroup`).
   */
  cpuGroup?: string | null;
}

/** How a service that works behind the requests is spawned: its nice value and cpu cgroup. */
export type BackgroundPriority = Pick<SpawnOptions, 'nice' | 'cpuGroup'>;

/**
 * The nice value of the services that work behind the requests on one machine (the Temporal server and the worker):
 * `BACKGROUND_NICE`, 10 unless set (0 turns it off). What they do waits anyway (a payout's settlement, a webhook's
 * delivery), so on cores they share with the api and PostgreSQL the request path comes first, and they take what it
 * leaves (bench/README.md, "The request path first").
 */
export function backgroundNice(env: NodeJS.ProcessEnv = process.env): number {
  const text = env.BACKGROUND_NICE ?? '10';
  const nice = Number(text);
  if (!/^\d+$/.test(text) || nice > 19) throw new Error(`BACKGROUND_NICE must be a whole number from 0 to 19, not ${JSON.stringify(text)}`);
  return nice;
}

/**
 * The cpu cgroup of the services behind the requests on one machine, whose `cpu.idle` is 1, unless `BACKGROUND_IDLE`
 * is 0 (1 unless set): the kernel schedules the group as it schedules SCHED_IDLE threads, so a thread of the api,
 * PostgreSQL or the PSP that wakes takes a core from it at once, where behind a nice value it waited for the
 * background's slice to end, and the group gets only the CPU the others leave. Within the group, nice orders its
 * threads as before. One client's Pix p50 was 4.1-6.3 ms with it against 8.0 ms without, in one sitting; a steady
 * load near what the machine settles lags further behind with it (bench/README.md, "An idle cpu cgroup for the
 * background", and this session's section). Needs a cpu controller this process may write (root, with cgroup v1's
 * `cpu` hierarchy or cgroup v2's root with `cpu` enabled) and Linux 5.15 or later (`cpu.idle`); elsewhere null, and
 * the nice value is all there is. Returns the group's `cgroup.procs` file (`SpawnOptions.cpuGroup`).
 */
export function backgroundCpuGroup(env: NodeJS.ProcessEnv = process.env): string | null {
  const text = env.BACKGROUND_IDLE ?? '1';
  if (text !== '0' && text !== '1') throw new Error(`BACKGROUND_IDLE must be 0 or 1, not ${JSON.stringify(text)}`);
  if (text === '0' || process.platform !== 'linux') return null;
  const root = cpuControllerRoot();
  if (!root) return null;
  const group = `${root}/banking-background`;
  try {
    mkdirSync(group, { recursive: true });
    writeFileSync(`${group}/cpu.idle`, '1');
    return `${group}/cgroup.procs`;
  } catch {
    // Not permitted here (not root, a read-only cgroup file system, a kernel before cpu.idle).
    return null;
  }
}

/** Where cpu cgroups are made: cgroup v1's `cpu` hierarchy, or cgroup v2's root when it hands `cpu` to its children. */
function cpuControllerRoot(): string | null {
  if (existsSync('/sys/fs/cgroup/cpu/cpu.shares')) return '/sys/fs/cgroup/cpu';
  try {
    const words = (file: string) => readFileSync(`/sys/fs/cgroup/${file}`, 'utf8').split(/\s+/);
    if (words('cgroup.controllers').includes('cpu') && words('cgroup.subtree_control').includes('cpu')) return '/sys/fs/cgroup';
  } catch {
    // No cgroup v2 mounted at /sys/fs/cgroup.
  }
  return null;
}

function joinCpuGroup(procs: string, pid: number | undefined): void {
  if (pid === undefined) return;
  try {
    writeFileSync(procs, String(pid));
  } catch {
    // The process is already gone, or the group was removed meanwhile: it runs where it was spawned.
  }
}

/**
 * Lowers a service's priority on Linux (`nice` of 0 or absent, or another system: nothing). Its threads inherit the
 * nice value of `nice -n`; that orders them only against processes of their own scheduling group, and every service
 * here has its own (a session of its own, `detached`, is an autogroup of its own), so the group's nice is set too
 * (`/proc/<pid>/autogroup`, sched(7)). A kernel without autogroups has no such file, and the threads' nice is what
 * counts there.
 */
const niceOnLinux = (o: SpawnOptions) => (process.platform === 'linux' ? (o.nice ?? 0) : 0);

function setAutogroupNice(pid: number | undefined, nice: number): void {
  if (pid === undefined) return;
  try {
    writeFileSync(`/proc/${pid}/autogroup`, String(nice));
  } catch {
    // No autogroups in this kernel (or the process is already gone): the threads' nice value is all there is.
  }
}

/**
 * Spawns a service in its own process group, so a Ctrl-C at the terminal reaches only the supervisor, which then
 * stops services in dependency order.
 */
export function spawnService(o: SpawnOptions): ManagedProcess {
  const output = o.inheritOutput ? 'inherit' : 'pipe';
  const nice = niceOnLinux(o);
  const [command, args] = nice ? ['nice', ['-n', String(nice), o.command, ...o.args]] : [o.command, o.args];
  const child = spawn(command, args, { env: o.env ?? process.env, stdio: ['ignore', output, output], detached: true });
  if (nice) setAutogroupNice(child.pid, nice);
  if (o.cpuGroup) joinCpuGroup(o.cpuGroup, child.pid);
  if (!o.inheritOutput) {
    for (const stream of ['stdout', 'stderr'] as const) {
      createInterface({ input: child[stream]! }).on('line', (line) => o.onLine?.(line, stream));
    }
  }
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code, signal) => resolve(code ?? (signal ? 128 : null))));
  return {
    name: o.name,
    child,
    exited,
    async stop(timeoutMs = 15_000) {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** Resolves with the first line that `match` accepts; rejects if the process exits first or time runs out. */
export function waitForLine<T>(p: ManagedProcess, match: (line: string) => T | undefined, timeoutMs: number, history: string[]): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${p.name} not ready after ${timeoutMs} ms:\n${history.slice(-30).join('\n')}`)), timeoutMs);
    const onLine = (line: string) => {
      const value = match(line);
      if (value !== undefined) {
        clearTimeout(timer);
        resolve(value);
      }
    };
    for (const stream of [p.child.stdout!, p.child.stderr!]) createInterface({ input: stream }).on('line', onLine);
    void p.exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`${p.name} exited (${code}) before it was ready:\n${history.slice(-30).join('\n')}`));
    });
  });
}

/** Polls a URL until it answers 200. */
export async function waitForHttp(url: string, timeoutMs: number, exited?: Promise<unknown>): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let dead = false;
  void exited?.then(() => (dead = true));
  for (;;) {
    try {
      const res = await fetch(url);
      if (res.status === 200) return;
    } catch {
      // not listening yet
    }
    if (dead) throw new Error(`process behind ${url} exited`);
    if (Date.now() > deadline) throw new Error(`${url} did not answer 200 within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 200));
  }
}
