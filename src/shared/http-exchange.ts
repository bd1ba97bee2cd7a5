import http from 'node:http';
import https from 'node:https';

export interface HttpExchange {
  method: 'GET' | 'POST';
  url: string;
  headers: http.OutgoingHttpHeaders;
  body: string | undefined;
  /** Connections kept open between calls: an `http.Agent` or `https.Agent` matching the url's scheme. */
  agent: http.Agent;
  /** The whole exchange, the answer's last byte included. */
  timeoutMs: number;
}

/**
 * One request and its whole answer within `timeoutMs`, never following a redirect (one is answered as it is).
 * node:http rather than fetch: the platform's provider adapter asks the directory on every payment by key and the
 * sandbox PSP notifies every payout, and fetch cost half as much CPU again per call (its streams and abort signal;
 * bench/README.md).
 */
export function httpExchange(x: HttpExchange): Promise<{ status: number; text: string }> {
  const transport = x.url.startsWith('https:') ? https : http;
  return new Promise((resolve, reject) => {
    const req = transport.request(x.url, { method: x.method, headers: x.headers, agent: x.agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        clearTimeout(timer);
        resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') });
      });
      res.on('error', fail);
    });
    const timer = setTimeout(() => req.destroy(new Error(`no complete answer within ${x.timeoutMs} ms`)), x.timeoutMs);
    function fail(err: Error) {
      clearTimeout(timer);
      reject(err);
    }
    req.on('error', fail);
    req.end(x.body);
  });
}

/** A keep-alive agent for the url's scheme. */
export const keepAliveAgentFor = (url: string): http.Agent => new (url.startsWith('https:') ? https : http).Agent({ keepAlive: true });
