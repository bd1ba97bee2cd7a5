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

export function createLogger(level: string, name: string): Logger {
  return pino({ level, name, redact: { paths: REDACTED_PATHS, censor: '[redacted]' } });
}
