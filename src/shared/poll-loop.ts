/** A background loop that does a step, then sleeps until its interval passes or it is woken. */
export interface PollLoop {
  /** Run the next step now (new work was just recorded). */
  wake(): void;
  /** Finishes the step under way, then stops. */
  stop(): Promise<void>;
}

/**
 * Runs `step` again at once while it reports more work, else after `intervalMs` or a `wake()`. A failing step is
 * reported to `onError` and tried again at the next interval.
 */
export function startPollLoop(intervalMs: number, step: () => Promise<boolean>, onError: (err: unknown) => void): PollLoop {
  let stopped = false;
  let woken = false;
  let interrupt: (() => void) | undefined;

  async function loop() {
    while (!stopped) {
      let more = false;
      try {
        more = await step();
      } catch (err) {
        onError(err);
      }
      if (more || woken) {
        woken = false;
        continue;
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, intervalMs);
        interrupt = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      interrupt = undefined;
    }
  }

  const running = loop();
  return {
    wake() {
      woken = true;
      interrupt?.();
    },
    async stop() {
      stopped = true;
      interrupt?.();
      await running;
    },
  };
}
