import http from 'node:http';

/**
 * JSON over node:http with one keep-alive agent per process. node:http costs the client less CPU per request than
 * fetch, which matters here: the load generator shares the machine's cores with the platform it measures.
 */
const agent = new http.Agent({ keepAlive: true, maxSockets: 256, maxFreeSockets: 256 });

export interface JsonResponse<T = any> {
  status: number;
  body: T;
}

export function request<T = any>(method: string, url: string, options: { body?: unknown; headers?: Record<string, string> } = {}): Promise<JsonResponse<T>> {
  const payload = options.body === undefined ? undefined : JSON.stringify(options.body);
  const headers: Record<string, string | number> = { accept: 'application/json', ...options.headers };
  if (payload !== undefined) {
    headers['content-type'] = 'application/json';
    headers['content-length'] = Buffer.byteLength(payload);
  }
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, headers, agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let body: unknown = text;
        try {
          body = text ? JSON.parse(text) : undefined;
        } catch {
          // not JSON: keep the text for the error message
        }
        resolve({ status: res.statusCode ?? 0, body: body as T });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(payload);
  });
}

/** Lets the process exit once the benchmark is done (idle keep-alive sockets would hold it open a while). */
export const closeHttp = () => agent.destroy();
