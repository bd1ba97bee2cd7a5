import argon2 from 'argon2';

/**
 * Passwords and PINs: argon2id (OWASP parameters) keyed with the server's pepper, so a leaked table alone cannot
 * be brute-forced, not even the 10,000 possible PINs.
 */
const OPTIONS = { type: argon2.argon2id, memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const;

export function hashSecretSlow(plain: string, pepper: string): Promise<string> {
  return argon2.hash(plain, { ...OPTIONS, secret: Buffer.from(pepper) });
}

export async function verifySecretSlow(hash: string, plain: string, pepper: string): Promise<boolean> {
  try {
    return await argon2.verify(hash, plain, { secret: Buffer.from(pepper) });
  } catch {
    return false;
  }
}

let decoy: Promise<string> | undefined;
/** Spends the same time as a real verification, for unknown users (no enumeration by timing). */
export async function verifyDecoy(plain: string, pepper: string): Promise<false> {
  decoy ??= hashSecretSlow('decoy-password-never-matches', pepper);
  await verifySecretSlow(await decoy, plain, pepper);
  return false;
}
