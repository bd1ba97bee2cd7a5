import { spawn, type ChildProcess } from 'node:child_process';
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
}

/**
 * Spawns a service in its own process group, so a Ctrl-C at the terminal reaches only the supervisor, which then
 * stops services in dependency order.
 */
export function spawnService(o: SpawnOptions): ManagedProcess {
  const output = o.inheritOutput ? 'inherit' : 'pipe';
  const child = spawn(o.command, o.args, { env: o.env ?? process.env, stdio: ['ignore', output, output], detached: true });
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
