/** The holder table's PIN attempt counter and lock, changed in single statements so parallel guesses stay counted. */
import type { EntityManager } from '@mikro-orm/postgresql';

/** Counts one attempt unless the PIN is locked or `max` attempts are in flight; returns the count and the hash. */
export async function reservePinAttempt(em: EntityManager, holderId: string, max: number): Promise<{ failedAttempts: number; pinHash: string } | null> {
  const [row] = await em.execute<{ pin_failed_attempts: number; pin_hash: string }[]>(
    `update holder set pin_failed_attempts = pin_failed_attempts + 1
      where id = ? and pin_locked_at is null and pin_failed_attempts < ?
      returning pin_failed_attempts, pin_hash`,
    [holderId, max],
  );
  return row ? { failedAttempts: row.pin_failed_attempts, pinHash: row.pin_hash } : null;
}

/** Whether the holder has a PIN, as its row says now. */
export async function isPinSet(em: EntityManager, holderId: string): Promise<boolean> {
  const [row] = await em.execute<{ set: boolean }[]>('select pin_hash is not null as set from holder where id = ?', [holderId]);
  return row?.set ?? false;
}

export async function isPinLocked(em: EntityManager, holderId: string): Promise<boolean> {
  const [row] = await em.execute<{ locked: boolean }[]>('select pin_locked_at is not null as locked from holder where id = ?', [holderId]);
  return row?.locked ?? false;
}

export async function clearPinAttempts(em: EntityManager, holderId: string): Promise<void> {
  await em.execute('update holder set pin_failed_attempts = 0 where id = ?', [holderId]);
}

export async function lockPin(em: EntityManager, holderId: string): Promise<void> {
  await em.execute('update holder set pin_locked_at = now() where id = ? and pin_locked_at is null', [holderId]);
}
