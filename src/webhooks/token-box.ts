import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

/**
 * Webhook auth tokens are needed in clear at delivery, so they are stored encrypted (AES-256-GCM) with a key derived
 * from the server's pepper, never hashed and never returned after registration.
 */
function keyFrom(pepper: string): Buffer {
  return Buffer.from(hkdfSync('sha256', pepper, 'webhook-auth-token', 'aes-256-gcm', 32));
}

export function sealToken(token: string, pepper: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', keyFrom(pepper), iv);
  const body = Buffer.concat([cipher.update(token, 'utf8'), cipher.final()]);
  return [iv, cipher.getAuthTag(), body].map((b) => b.toString('base64url')).join('.');
}

export function openToken(sealed: string, pepper: string): string {
  const [iv, tag, body] = sealed.split('.').map((p) => Buffer.from(p, 'base64url'));
  const decipher = createDecipheriv('aes-256-gcm', keyFrom(pepper), iv!);
  decipher.setAuthTag(tag!);
  return Buffer.concat([decipher.update(body!), decipher.final()]).toString('utf8');
}
