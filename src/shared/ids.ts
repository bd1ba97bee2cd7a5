import { createHmac, randomFillSync, randomUUID } from 'node:crypto';
import { isCuid } from '@paralleldrive/cuid2';
import { secretKeyOf } from './secret-key.ts';

/** decisions.md: holders, accounts and statement transactions are UUIDs; transfers, payouts, movements, entries are cuid2. */
export const newUuid = (): string => randomUUID();

const LETTERS = 'abcdefghijklmnopqrstuvwxyz';

/** 23 base-36 characters of the first 128 bits: with a leading letter, the cuid2 shape (`isCuid`). */
const base36Body = (bytes: Buffer): string => BigInt(`0x${bytes.subarray(0, 16).toString('hex')}`).toString(36).padStart(23, '0').slice(-23);

/** Bytes of the operating system's CSPRNG, drawn a block at a time; each id takes its own bytes, never reused. */
const ENTROPY_BLOCK = 17 * 256;
const entropy = Buffer.alloc(ENTROPY_BLOCK);
let entropyUsed = ENTROPY_BLOCK;

function randomBytesFromBlock(size: number): Buffer {
  if (entropyUsed + size > ENTROPY_BLOCK) {
    randomFillSync(entropy);
    entropyUsed = 0;
  }
  const bytes = entropy.subarray(entropyUsed, entropyUsed + size);
  entropyUsed += size;
  return bytes;
}

/**
 * A new id in the cuid2 format, from 119 random bits of the operating system's CSPRNG. The reference cuid2 generator
 * hashes with SHA3 in JavaScript, about 190 µs an id (measured); a transfer needs eight of them. The bytes come from a
 * block drawn 256 ids at a time, as `randomUUID` draws its own: a call to the CSPRNG for each id was 0.6–0.8% of the
 * api's CPU (bench/README.md).
 */
export function newCuid(): string {
  const bytes = randomBytesFromBlock(17);
  return `${LETTERS[bytes[16]! % LETTERS.length]}${base36Body(bytes)}`;
}
export const looksLikeCuid = (value: string): boolean => isCuid(value);

/**
 * An id derived from a scope and an idempotency key (HMAC with the pepper), in cuid2 shape: `prefix` and 23 base-36
 * characters. Every retry of one request, even two arriving at once, names the same operation and workflow.
 */
export function derivedId(pepper: string, prefix: string, scope: string): string {
  const digest = createHmac('sha256', secretKeyOf(pepper)).update(scope).digest();
  return `${prefix}${base36Body(digest)}`;
}
