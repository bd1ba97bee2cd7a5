import { createServer } from 'node:net';

/**
 * Ports are taken below Linux's ephemeral range (32768–60999): a port the OS handed out with `listen(0)` and released
 * can be taken at once by any outgoing connection (to PostgreSQL, Temporal, a fetch) before the process meant for it
 * binds, and that process then exits with EADDRINUSE. Each jest worker draws from its own slice, so two test files
 * running side by side never pick the same port either.
 */
const FIRST_PORT = 20_000;
const SLICE = 1_500;
const workerIndex = Number(process.env.JEST_WORKER_ID ?? '0') % 8;
const sliceStart = FIRST_PORT + workerIndex * SLICE;
let next = Math.floor(Math.random() * SLICE);

function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** A port free now, outside the ephemeral range and not handed out before by this process. */
export async function freePort(): Promise<number> {
  for (let tries = 0; tries < SLICE; tries++) {
    const port = sliceStart + (next++ % SLICE);
    if (await bindable(port)) return port;
  }
  throw new Error(`no free port in ${sliceStart}–${sliceStart + SLICE - 1}`);
}
