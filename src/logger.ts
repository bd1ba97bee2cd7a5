import { pino, type Logger } from 'pino';

/** Paths that must never reach a log line: credentials, PINs, webhook tokens. */
export const REDACTED_PATHS = [
  'req.headers.authorization',
  'req.headers["x-tenant-api-key"]',
  'req.headers.cookie',
  '*.password',
  '*.pin',
  '*.newPin',
  '*.currentPin',
  '*.authToken',
  '*.key',
  '*.secret',
];

/** Lines are written together once this many bytes wait, and at least this often. */
const BATCH_BYTES = 4096;
const FLUSH_EVERY_MS = 100;

/**
 * JSON lines on stdout, written asynchronously in batches rather than with a write of their own each (the api writes a
 * line per request; bench/README.md). A quiet process's lines still go out within `FLUSH_EVERY_MS`. Pending lines are
 * flushed when the process exits; a SIGKILL may lose the last ones.
 */
export function createLogger(level: string, name: string): Logger {
  return pino(
    { level, name, redact: { paths: REDACTED_PATHS, censor: '[redacted]' } },
    pino.destination({ dest: 1, sync: false, minLength: BATCH_BYTES, periodicFlush: FLUSH_EVERY_MS }),
  );
}
