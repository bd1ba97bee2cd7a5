import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from '../shared/zod.ts';
import type { Config } from '../config.ts';
import { DomainError, refusals, validationError } from '../shared/errors.ts';
import { hashSecretSlow, verifySecretSlow } from '../shared/secrets.ts';
import type { HolderAuth } from './authenticator.ts';
import { Holder } from './entities.ts';
import { clearPinAttempts, isPinLocked, isPinSet, lockPin, reservePinAttempt } from './pin-store.ts';

export const MAX_PIN_ATTEMPTS = 3;

/** Repeated digits and straight runs are the first guesses of anyone holding a stolen phone. */
export function isWeakPin(pin: string): boolean {
  if (/^(\d)\1{3}$/.test(pin)) return true;
  const steps = [1, 2, 3].map((i) => Number(pin[i]) - Number(pin[i - 1]));
  return steps.every((s) => s === 1) || steps.every((s) => s === -1);
}

export const pinSchema = z.string().regex(/^\d{4}$/, 'must be exactly 4 digits');
export const newPinSchema = pinSchema.refine((p) => !isWeakPin(p), 'too easy to guess: avoid repeated digits and sequences such as 1234');

export async function createPin(em: EntityManager, config: Config, holder: Holder, pin: string): Promise<void> {
  const hash = await hashSecretSlow(pin, config.KEY_PEPPER);
  // Conditional update: two concurrent create-pin calls cannot both win.
  const updated = await em.nativeUpdate(Holder, { id: holder.id, pinHash: null }, { pinHash: hash, pinFailedAttempts: 0, pinLockedAt: null });
  if (updated === 0) throw new DomainError('PIN_ALREADY_SET');
}
createPin.raises = refusals('PIN_ALREADY_SET');

/**
 * The one PIN check every write operation uses. An attempt is reserved (counted) before the slow verification,
 * so parallel guesses cannot exceed the limit; a correct PIN clears the count; the third wrong one locks the PIN
 * until an operator unlocks it (`holder:unlock-pin`).
 */
export async function verifyPin(em: EntityManager, config: Config, holder: Holder, pin: string | undefined): Promise<void> {
  // A PIN is never removed, so a holder read with one has one. One read without may be the api's kept copy from before
  // the PIN was created a moment ago (its change announced, not heard yet): the row decides.
  if (!holder.pinHash && !(await isPinSet(em, holder.id))) throw new DomainError('PIN_NOT_SET');
  if (pin === undefined || !/^\d{4}$/.test(pin)) {
    throw validationError('A 4-digit PIN is required', [{ path: 'body.pin', message: 'must be exactly 4 digits' }]);
  }
  const reserved = await reservePinAttempt(em, holder.id, MAX_PIN_ATTEMPTS);
  if (!reserved) {
    // Not locked: every attempt is in flight in parallel requests right now.
    throw new DomainError((await isPinLocked(em, holder.id)) ? 'PIN_LOCKED' : 'PIN_ATTEMPTS_IN_FLIGHT');
  }
  if (await verifySecretSlow(reserved.pinHash, pin, config.KEY_PEPPER)) {
    await clearPinAttempts(em, holder.id);
    return;
  }
  if (reserved.failedAttempts >= MAX_PIN_ATTEMPTS) {
    await lockPin(em, holder.id);
    throw new DomainError('PIN_LOCKED');
  }
  throw new DomainError('INVALID_PIN', { attemptsLeft: MAX_PIN_ATTEMPTS - reserved.failedAttempts });
}
verifyPin.raises = refusals('PIN_NOT_SET', 'INVALID_PIN', 'PIN_LOCKED', 'PIN_ATTEMPTS_IN_FLIGHT');

/** The PIN check of a holder's write: every caller gives the PIN, except a client token of a PIN-exempt tenant. */
export async function checkPin(auth: Pick<HolderAuth, 'em' | 'holder' | 'pinExempt'>, config: Config, pin: string | undefined): Promise<void> {
  if (!auth.pinExempt) await verifyPin(auth.em, config, auth.holder, pin);
}
checkPin.raises = refusals(verifyPin);

export async function changePin(em: EntityManager, config: Config, holder: Holder, currentPin: string, newPin: string): Promise<void> {
  await verifyPin(em, config, holder, currentPin);
  if (currentPin === newPin) throw validationError('The new PIN must differ from the current one', [{ path: 'body.newPin', message: 'same as the current PIN' }]);
  await em.nativeUpdate(Holder, { id: holder.id }, { pinHash: await hashSecretSlow(newPin, config.KEY_PEPPER) });
}
changePin.raises = refusals(verifyPin);

export async function unlockPin(em: EntityManager, holderId: string): Promise<void> {
  await em.nativeUpdate(Holder, { id: holderId }, { pinFailedAttempts: 0, pinLockedAt: null });
}
