import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:https';
import { rootCertificates } from 'node:tls';
import type { Config } from '../config.ts';
import { guardedLookup } from './address-guard.ts';
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
 * Keep-alive connections to one endpoint, at most `maxSockets` at once. The trusted CAs and, outside the sandbox, the
 * address guard live on the agent: per-request TLS options would be part of the agent's pool key, rebuilt (with
 * every root certificate) on each request.
 */
export function receiverAgent(config: Config, maxSockets: number): Agent {
  return new Agent({ keepAlive: true, maxSockets, ca: trustedCAs(config), lookup: config.SANDBOX ? undefined : guardedLookup });
}

/**
 * One HTTPS POST of `{event, data}`: `Authorization` is exactly the authToken, plus the Standard Webhooks headers.
 * No redirects are followed, at most 64 KiB of the answer is read, and outside the sandbox the socket may only
 * connect to public addresses. Success is a 2xx within the timeout.
 */
export function send(config: Config, target: { url: string; authToken: string; agent: Agent }, event: { id: string; type: string; data: unknown }): Promise<SendResult> {
  const body = JSON.stringify({ event: event.type, data: event.data });
  const timestamp = Math.floor(Date.now() / 1000);
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  return new Promise((resolve) => {
    let settled = false;
    const finish = (r: Omit<SendResult, 'durationMs'>) => {
      if (settled) return;
      settled = true;
      resolve({ ...r, durationMs: elapsed() });
    };
    const req = request(
      target.url,
      {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'user-agent': 'banking-platform-webhooks/1',
          authorization: target.authToken,
          'webhook-id': event.id,
          'webhook-timestamp': String(timestamp),
          'webhook-signature': sign(target.authToken, event.id, timestamp, body),
        },
        agent: target.agent,
        timeout: config.WEBHOOK_TIMEOUT_MS,
      },
      (res) => {
        let read = 0;
        res.on('data', (chunk: Buffer) => {
          read += chunk.length;
          if (read > MAX_RESPONSE_BYTES) res.destroy();
        });
        const done = () => {
          const ok = res.statusCode! >= 200 && res.statusCode! < 300;
          finish({ statusCode: res.statusCode!, error: ok ? null : `receiver answered ${res.statusCode}` });
        };
        res.on('end', done);
        res.on('close', done);
      },
    );
    const deadline = setTimeout(() => req.destroy(new Error(`no answer within ${config.WEBHOOK_TIMEOUT_MS} ms`)), config.WEBHOOK_TIMEOUT_MS);
    req.on('timeout', () => req.destroy(new Error(`no answer within ${config.WEBHOOK_TIMEOUT_MS} ms`)));
    req.on('error', (err) => finish({ statusCode: null, error: err.message }));
    req.on('close', () => clearTimeout(deadline));
    req.end(body);
  });
}
