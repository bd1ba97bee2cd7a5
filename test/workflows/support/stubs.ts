/** Stub activities for the workflow tests: they answer as told and remember every call. */

export interface ActivityCall {
  name: string;
  args: unknown[];
  /** When the call started (ms since the epoch): waits between calls are what timers are judged by. */
  at: number;
}

/** Stub activities that remember every call, in order. */
export class ActivityLog {
  readonly calls: ActivityCall[] = [];

  /** The stubs, each wrapped to record its call before it runs. */
  record<T extends object>(stubs: T): T {
    return Object.fromEntries(
      Object.entries(stubs).map(([name, stub]) => [
        name,
        (...args: unknown[]) => {
          this.calls.push({ name, args, at: Date.now() });
          return (stub as (...a: unknown[]) => unknown)(...args);
        },
      ]),
    ) as T;
  }

  names(): string[] {
    return this.calls.map((c) => c.name);
  }

  /** The calls as `[name, ...args]`, for one readable equality check. */
  list(): unknown[][] {
    return this.calls.map((c) => [c.name, ...c.args]);
  }
}

/** A stub answer that changes per call: the answers in order, the last one repeated. */
export function inTurn<T>(...answers: T[]): () => Promise<T> {
  let calls = 0;
  return async () => answers[Math.min(calls++, answers.length - 1)]!;
}
