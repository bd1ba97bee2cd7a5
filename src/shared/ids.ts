import { randomUUID } from 'node:crypto';
import { createId, isCuid } from '@paralleldrive/cuid2';

/** decisions.md: holders, accounts and statement transactions are UUIDs; transfers, payouts, movements, entries are cuid2. */
export const newUuid = (): string => randomUUID();
export const newCuid = (): string => createId();
export const looksLikeCuid = (value: string): boolean => isCuid(value);
