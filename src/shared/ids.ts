import { createHmac, randomUUID } from 'node:crypto';
import { createId, isCuid } from '@paralleldrive/cuid2';

/** decisions.md: holders, accounts and statement transactions are UUIDs; transfers, payouts, movements, entries are cuid2. */
export const newUuid = (): string => randomUUID();
export const newCuid = (): string => createId();
export const looksLikeCuid = (value: string): boolean => isCuid(value);

/**
 * An id derived from a scope and an idempotency key (HMAC with the pepper), in cuid2 shape: `prefix` and 23 base-36
 * characters. Every retry of one request, even two arriving at once, names the same operation and workflow.
 */
export function derivedId(pepper: string, prefix: string, scope: string): string {
  const digest = createHmac('sha256', pepper).update(scope).digest();
  return `${prefix}${BigInt(`0x${digest.subarray(0, 16).toString('hex')}`).toString(36).padStart(23, '0').slice(-23)}`;
}
