import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';

/** A self-signed certificate for 127.0.0.1, made once per run; the platform trusts it through WEBHOOK_CA_FILE. */
export function testCertificate(): { key: string; cert: string; certFile: string } {
  const dir = join(process.cwd(), 'data', 'test-tls');
  const keyFile = join(dir, 'key.pem');
  const certFile = join(dir, 'cert.pem');
  if (!existsSync(certFile)) {
    mkdirSync(dir, { recursive: true });
    execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', keyFile, '-out', certFile, '-days', '2', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1,DNS:localhost'], { stdio: 'ignore' });
  }
  return { key: readFileSync(keyFile, 'utf8'), cert: readFileSync(certFile, 'utf8'), certFile };
}

export interface Received {
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  at: number;
}

export type Behaviour = (request: Received, index: number) => number | 'hang';

export interface Receiver {
  url: string;
  received: Received[];
  behave(b: Behaviour): void;
  close(): Promise<void>;
}

/** A real HTTPS receiver in the test process: records every request and answers as told (a status, or never). */
export async function startReceiver(): Promise<Receiver> {
  const { key, cert } = testCertificate();
  const received: Received[] = [];
  let behaviour: Behaviour = () => 200;
  const server: Server = createServer({ key, cert }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const r = { path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() };
      received.push(r);
      const answer = behaviour(r, received.length - 1);
      if (answer === 'hang') return;
      res.writeHead(answer, { 'content-type': 'application/json' }).end('{"ok":true}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `https://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received,
    behave: (b) => void (behaviour = b),
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
