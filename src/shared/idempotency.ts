import { createHash } from 'node:crypto';
import { DomainError, refusals } from './errors.ts';
import { z } from './zod.ts';

/**
 * Idempotency, one rule for every operation that takes an `Idempotency-Key`: the key names the operation, the
 * request's hash is stored with it, and the same key with another request is 409.
 */
export const idempotencyKey = z
  .string()
  .trim()
  .min(1)
  .max(100)
  .regex(/^[A-Za-z0-9._:-]+$/, 'use a UUID (letters, digits, . _ : - only)')
  .openapi({ description: 'UUID recommended; the same key returns the original result' });

/** A stable hash of what a request asks for (its canonical JSON). */
export function requestHash(request: unknown): string {
  return createHash('sha256').update(JSON.stringify(request)).digest('hex');
}

export function assertSameRequest(storedHash: string, hash: string): void {
  if (storedHash !== hash) throw idempotencyConflict();
}
assertSameRequest.raises = refusals('IDEMPOTENCY_KEY_REUSED');

export const idempotencyConflict = () => new DomainError('IDEMPOTENCY_KEY_REUSED');
