import { readFileSync } from 'node:fs';
import { rootCertificates } from 'node:tls';
import { Pool } from 'undici';
import type { Config } from '../config.ts';
import { guardedLookup, isForbiddenLiteral } from '../shared/address-guard.ts';
import { sign } from './signature.ts';

export interface SendResult {
  statusCode: number | null;
  durationMs: number;
  error: string | null;
}

const MAX_RESPONSE_BYTES = 64 * 1024;

let trusted: string[] | undefined;
function trustedCAs(config: Config): string[] | undefined {
  if (!config.WEBHOOK_CA_FILE) return undefined;
  return (trusted ??= [...rootCertificates, readFileSync(config.WEBHOOK_CA_FILE, 'utf8')]);
}

/**
 * Keep-alive connections to one endpoint's origin, at most `connections` at once, with the trusted CAs and, outside
 * the sandbox, the address guard on every connection. undici's pool costs a tenth of the CPU per request that
 * `node:https` did here (measured: 0.2 against 1.5 ms, client and receiver in one process).
 */
export function receiverPool(config: Config, url: string, connections: number): Pool {
  return new Pool(new URL(url).origin, {
    connections,
    connect: { ca: trustedCAs(config), ...(config.SANDBOX ? {} : { lookup: guardedLookup }) },
    headersTimeout: config.WEBHOOK_TIMEOUT_MS,
    bodyTimeout: config.WEBHOOK_TIMEOUT_MS,
  });
}

/**
 * One HTTPS POST of `{event, data}`: `Authorization` is exactly the authToken, plus the Standard Webhooks headers.
 * No redirects are followed, at most 64 KiB of the answer is read, and outside the sandbox the socket may only
 * connect to public addresses. Success is a 2xx within the timeout.
 */
export async function send(config: Config, target: { url: string; authToken: string; pool: Pool }, event: { id: string; type: string; data: unknown }): Promise<SendResult> {
  const body = JSON.stringify({ event: event.type, data: event.data });
  const timestamp = Math.floor(Date.now() / 1000);
  const url = new URL(target.url);
  const started = performance.now();
  const result = (statusCode: number | null, error: string | null): SendResult => ({ statusCode, error, durationMs: Math.round(performance.now() - started) });
  // The connect-time guard checks looked-up names only: a literal address is checked here, at every send, as at registration.
  if (!config.SANDBOX && isForbiddenLiteral(url)) return result(null, `${url.hostname} is a forbidden address`);
  const { pathname, search } = url;
  try {
    const res = await target.pool.request({
      path: `${pathname}${search}`,
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'user-agent': 'banking-platform-webhooks/1',
        authorization: target.authToken,
        'webhook-id': event.id,
        'webhook-timestamp': String(timestamp),
        'webhook-signature': sign(target.authToken, event.id, timestamp, body),
      },
      body,
      signal: AbortSignal.timeout(config.WEBHOOK_TIMEOUT_MS),
    });
    let read = 0;
    for await (const chunk of res.body) {
      read += (chunk as Buffer).length;
      if (read > MAX_RESPONSE_BYTES) {
        res.body.destroy();
        break;
      }
    }
    const ok = res.statusCode >= 200 && res.statusCode < 300;
    return result(res.statusCode, ok ? null : `receiver answered ${res.statusCode}`);
  } catch (err) {
    const timedOut = err instanceof Error && (err.name === 'TimeoutError' || err.name === 'HeadersTimeoutError' || err.name === 'BodyTimeoutError');
    return result(null, timedOut ? `no answer within ${config.WEBHOOK_TIMEOUT_MS} ms` : err instanceof Error ? (err.cause instanceof Error ? err.cause.message : err.message) : String(err));
  }
}
