import { createHmac } from 'node:crypto';

/** Standard Webhooks: `v1,` + base64 HMAC-SHA256 of `<webhook-id>.<webhook-timestamp>.<body>`, keyed with the authToken's UTF-8 bytes. */
export function sign(authToken: string, webhookId: string, timestamp: number, body: string): string {
  return signWithKey(Buffer.from(authToken, 'utf8'), webhookId, timestamp, body);
}

/** The same signature keyed with raw bytes (a `whsec_` secret's decoded key), over the body's exact bytes. */
export function signWithKey(key: Buffer, webhookId: string, timestamp: number, body: string | Buffer): string {
  return `v1,${createHmac('sha256', key).update(`${webhookId}.${timestamp}.`).update(body).digest('base64')}`;
}
