import { createHmac } from 'node:crypto';

/** Standard Webhooks: `v1,` + base64 HMAC-SHA256 of `<webhook-id>.<webhook-timestamp>.<body>`, keyed with the authToken's UTF-8 bytes. */
export function sign(authToken: string, webhookId: string, timestamp: number, body: string): string {
  return `v1,${createHmac('sha256', Buffer.from(authToken, 'utf8')).update(`${webhookId}.${timestamp}.${body}`).digest('base64')}`;
}
