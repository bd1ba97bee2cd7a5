import { createPrivateKey, generateKeyPairSync } from 'node:crypto';
import { join } from 'node:path';
import type { Config } from '../config.ts';
import { keptFile } from '../shared/kept-file.ts';
import { jwsSigner } from '../shared/jws.ts';
import { parseCertificateChain } from '../shared/signing-certificate.ts';

/** Where the key generated when PIX_SIGNING_KEY is unset is kept, so every restart publishes the same key. */
const GENERATED_KEY_FILE = join('data', 'pix-signing-key.pem');

/** The key generated once for this machine (EC P-256), or the one an earlier start (or another process) generated. */
const generatedKeyPem = () =>
  keptFile(GENERATED_KEY_FILE, () => generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString());

/**
 * The platform's signer of charge payloads: PIX_SIGNING_KEY, or the key generated for this machine, with the
 * certificate chain of PIX_SIGNING_CERT (which the configuration checked against the key).
 */
export const platformSigner = (config: Pick<Config, 'PIX_SIGNING_KEY' | 'PIX_SIGNING_CERT'>) =>
  jwsSigner(createPrivateKey(config.PIX_SIGNING_KEY ?? generatedKeyPem()), config.PIX_SIGNING_CERT ? parseCertificateChain(config.PIX_SIGNING_CERT) : []);
