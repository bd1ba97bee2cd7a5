import { createPrivateKey, generateKeyPairSync } from 'node:crypto';
import { linkSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Config } from '../config.ts';
import { jwsSigner } from './jws.ts';

/** Where the key generated when PIX_SIGNING_KEY is unset is kept, so every restart publishes the same key. */
const GENERATED_KEY_FILE = join('data', 'pix-signing-key.pem');

/** The key generated once for this machine (EC P-256), or the one an earlier start (or another process) generated. */
function generatedKeyPem(): string {
  try {
    return readFileSync(GENERATED_KEY_FILE, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  mkdirSync('data', { recursive: true });
  const pem = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'pkcs8', format: 'pem' });
  // Written aside, then linked into place: a process starting at the same moment reads a whole key or none.
  const draft = `${GENERATED_KEY_FILE}.${process.pid}`;
  writeFileSync(draft, pem, { mode: 0o600 });
  try {
    linkSync(draft, GENERATED_KEY_FILE);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  } finally {
    unlinkSync(draft);
  }
  return readFileSync(GENERATED_KEY_FILE, 'utf8');
}

/** The platform's signer of charge payloads: PIX_SIGNING_KEY, or the key generated for this machine. */
export const platformSigner = (config: Pick<Config, 'PIX_SIGNING_KEY'>) => jwsSigner(createPrivateKey(config.PIX_SIGNING_KEY ?? generatedKeyPem()));
