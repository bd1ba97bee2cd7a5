import pg from 'pg';

/**
 * Whether the server answered a statement with an ERROR: a single statement outside a transaction block is then
 * rolled back. A FATAL (the backend was terminated) or a broken connection says nothing about the commit.
 */
export function rolledBack(err: unknown): err is pg.DatabaseError {
  return err instanceof pg.DatabaseError && err.severity === 'ERROR';
}

/**
 * SQLSTATE classes of errors that may heal by themselves: a serialization failure or deadlock (40), a statement
 * timeout or cancel and other operator interventions (57), exhausted resources (53), a lost connection (08), a lock
 * not available (55P03), a system error such as an I/O failure (58).
 */
const TRANSIENT = /^(40|57|53|08|58)|^55P03$/;

/**
 * A statement the database refused for a reason that running it again would meet again: an exception raised by a
 * function, a violated constraint, bad data. Nothing was written, so the outcome is known; and it is not transient,
 * so retrying it is pointless. Anything else (a timeout, a lost connection, a deadlock) is not definite.
 */
export function definitelyRefused(err: unknown): err is pg.DatabaseError {
  return rolledBack(err) && !TRANSIENT.test(err.code ?? '');
}
