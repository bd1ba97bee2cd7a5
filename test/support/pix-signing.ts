import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface SigningCertificate {
  /** PIX_SIGNING_KEY: an EC P-256 private key (PKCS#8 PEM). */
  key: string;
  /** Its certificate, issued by `ca`. */
  leaf: string;
  ca: string;
  /** PIX_SIGNING_CERT: leaf, then CA. */
  chain: string;
}

/**
 * A signing key with a certificate chain made for it by a test CA (openssl), as an ICP-Brasil chain stands beside a
 * PSP's key in production. New files each call, so test files running at once never share a half-written one.
 */
export function signingCertificate(): SigningCertificate {
  const dir = mkdtempSync(join(tmpdir(), 'pix-signing-'));
  const file = (name: string) => join(dir, name);
  const openssl = (...args: string[]) => execFileSync('openssl', args, { stdio: 'ignore' });
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];
  openssl('req', '-x509', ...ec, '-keyout', file('ca.key'), '-out', file('ca.pem'), '-days', '2', '-subj', '/CN=Test Pix CA', '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign');
  openssl('req', '-new', ...ec, '-keyout', file('leaf.key'), '-out', file('leaf.csr'), '-subj', '/CN=Test Pix Signing');
  openssl('x509', '-req', '-in', file('leaf.csr'), '-CA', file('ca.pem'), '-CAkey', file('ca.key'), '-set_serial', '2', '-days', '2', '-out', file('leaf.pem'));
  const [key, leaf, ca] = ['leaf.key', 'leaf.pem', 'ca.pem'].map((name) => readFileSync(file(name), 'utf8')) as [string, string, string];
  return { key, leaf, ca, chain: `${leaf}${ca}` };
}
