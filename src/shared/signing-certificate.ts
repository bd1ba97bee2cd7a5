import { createPrivateKey, createPublicKey, X509Certificate } from 'node:crypto';

/**
 * The certificate chain beside the key that signs charge payloads (`PIX_SIGNING_CERT`): the Pix network's payers check
 * a receiver's signature against its certificate (ICP-Brasil in production), which the key set publishes as `x5c`.
 */

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[^-]+-----END CERTIFICATE-----/g;

/** The certificates of a PEM chain, in their order; throws when a block is not a certificate. */
export function parseCertificateChain(pem: string): X509Certificate[] {
  return (pem.match(PEM_CERTIFICATE) ?? []).map((block) => new X509Certificate(block));
}

const spki = (key: ReturnType<typeof createPublicKey>) => key.export({ type: 'spki', format: 'der' });

/**
 * Why a chain cannot stand beside the signing key, or null. It must be the key's own certificate first (a payer
 * checks the signature against that certificate's key), then each issuer in turn (RFC 7515 §4.1.6).
 */
export function certificateChainProblem(chainPem: string, signingKeyPem: string | undefined): string | null {
  let chain: X509Certificate[];
  try {
    chain = parseCertificateChain(chainPem);
  } catch {
    chain = [];
  }
  if (chain.length === 0) return "must be PEM certificates: the signing key's certificate first, then its issuers";
  if (signingKeyPem === undefined) return 'needs PIX_SIGNING_KEY, the private key of its first certificate';
  if (!spki(chain[0]!.publicKey).equals(spki(createPublicKey(createPrivateKey(signingKeyPem))))) {
    return "its first certificate is not PIX_SIGNING_KEY's: payers would check the payloads' signatures against another key";
  }
  for (let i = 0; i + 1 < chain.length; i++) {
    const [subject, issuer] = [chain[i]!, chain[i + 1]!];
    if (!subject.checkIssued(issuer) || !subject.verify(issuer.publicKey)) {
      return `certificate ${i + 2} did not issue certificate ${i + 1}: the chain goes from the signing key's certificate to each issuer in turn`;
    }
  }
  return null;
}
