import type { ManagedProcess } from './processes.ts';

/** One service the supervisor keeps running: how to start it (and wait until it is ready). */
export interface ServiceSpec {
  name: string;
  start(): Promise<ManagedProcess>;
}

export interface Supervisor {
  /** Starts the service and keeps it running: a crash is logged and followed by a restart, with backoff. */
  keep(spec: ServiceSpec): Promise<void>;
  /** Stops every service, last started first, and stops restarting them. */
  stopAll(): Promise<void>;
}

const FIRST_BACKOFF_MS = 1000;
const MAX_BACKOFF_MS = 30_000;
/** A service that ran this long before crashing is restarted at once again: it was not crash-looping. */
const STABLE_MS = 60_000;

/**
 * Keeps child processes running. Only `stopAll` (Ctrl-C or SIGTERM at the top) stops them: a child that exits is
 * restarted after 1 s, doubling to 30 s while it keeps failing. The rest of the platform stays up meanwhile; api and
 * worker reconnect by themselves when their database or Temporal comes back.
 */
export function createSupervisor(say: (line: string) => void): Supervisor {
  const running: { spec: ServiceSpec; current: ManagedProcess | null }[] = [];
  let stopping = false;

  async function runOnce(entry: { spec: ServiceSpec; current: ManagedProcess | null }): Promise<ManagedProcess> {
    const p = await entry.spec.start();
    entry.current = p;
    return p;
  }

  function watch(entry: { spec: ServiceSpec; current: ManagedProcess | null }, p: ManagedProcess, backoffMs: number) {
    const startedAt = Date.now();
    void p.exited.then(async (code) => {
      if (stopping) return;
      entry.current = null;
      let delay = Date.now() - startedAt > STABLE_MS ? FIRST_BACKOFF_MS : backoffMs;
      for (;;) {
        say(`${entry.spec.name} exited (${code}); restarting in ${delay / 1000} s`);
        await new Promise((r) => setTimeout(r, delay));
        if (stopping) return;
        const next = Math.min(delay * 2, MAX_BACKOFF_MS);
        try {
          const restarted = await runOnce(entry);
          say(`${entry.spec.name} restarted`);
          watch(entry, restarted, next);
          return;
        } catch (err) {
          say(`${entry.spec.name} failed to restart: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}`);
          delay = next;
        }
      }
    });
  }

  return {
    async keep(spec) {
      const entry = { spec, current: null as ManagedProcess | null };
      running.push(entry);
      watch(entry, await runOnce(entry), FIRST_BACKOFF_MS);
    },
    async stopAll() {
      stopping = true;
      for (const entry of [...running].reverse()) {
        if (!entry.current) continue;
        await entry.current.stop();
        say(`${entry.spec.name} stopped`);
      }
    },
  };
}

/**
 * Stops the supervisor's services in reverse start order (an api and worker before Temporal, PostgreSQL last), once,
 * then exits with `code`; SIGINT and SIGTERM call it with 0. Answers it, for a start that fails.
 */
export function stopOnSignals(supervisor: Supervisor, say: (line: string) => void): (code: number) => Promise<never> {
  let stopping: Promise<never> | undefined;
  const stopAll = (code: number): Promise<never> => {
    stopping ??= (async () => {
      say('stopping...');
      await supervisor.stopAll();
      process.exit(code);
    })();
    return stopping;
  };
  process.on('SIGINT', () => void stopAll(0));
  process.on('SIGTERM', () => void stopAll(0));
  return stopAll;
}
