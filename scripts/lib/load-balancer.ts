import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { spawnService, type ManagedProcess } from './processes.ts';

/** One port clients use, and the instances behind it (name and `host:port`). */
export interface BalancedPort {
  name: string;
  port: number;
  servers: { name: string; address: string }[];
}

/** The holder and integration APIs of each api instance, behind the load balancer's two ports. */
export const balancedApis = (ports: { holder: number; integration: number }, apis: { name: string; holder: string; integration: string }[]): BalancedPort[] => [
  { name: 'holder', port: ports.holder, servers: apis.map((a) => ({ name: a.name, address: a.holder })) },
  { name: 'integration', port: ports.integration, servers: apis.map((a) => ({ name: a.name, address: a.integration })) },
];

/**
 * HAProxy's configuration. Each api instance is checked every second over TCP (not `/health`: it answers 503 while
 * Temporal is away, and the api still serves everything that does not need Temporal then); a request whose
 * connection is refused (the instance just died) is sent to the other instance, which is safe because nothing of it
 * was sent. A request already sent is never sent again: the one a dying instance had taken is answered 503 (below),
 * or its client connection is closed, as with one api, and the client retries it with its Idempotency-Key.
 * `X-Forwarded-For` carries the client's address (the apis run with TRUST_PROXY), and every answer names the
 * instance that served it (`X-Api-Instance`). docker-compose.yml's load balancer reads the same configuration
 * (docker/haproxy.cfg, checked by test/cluster-topology.test.ts).
 */
/**
 * What HAProxy answers when no instance answered (502: the instance died under the request; 503: none is up; 504):
 * the platform's own 503 UNAVAILABLE, which every operation documents, so a client handles it as it handles an api's.
 * The request may or may not have taken effect: the client retries it with the same Idempotency-Key.
 */
export const UNAVAILABLE_ANSWER = [
  'HTTP/1.1 503 Service Unavailable',
  'content-type: application/json; charset=utf-8',
  'cache-control: no-store',
  'connection: close',
  '',
  JSON.stringify({ code: 'UNAVAILABLE', message: 'No api instance answered this request; it may or may not have taken effect: retry it with the same Idempotency-Key' }),
].join('\r\n');

/** `errorFile`: where UNAVAILABLE_ANSWER is written, as HAProxy reads it. */
export function haproxyConfig(host: string, ports: BalancedPort[], errorFile: string, nameserver?: string): string {
  const lines = [
    'global',
    '  maxconn 4096',
    // One thread: on two cores the api instances need the CPU more than the balancer does.
    '  nbthread 1',
    '',
    'defaults',
    '  mode http',
    '  option http-keep-alive',
    '  option forwardfor',
    '  option redispatch 1',
    '  retries 3',
    '  timeout connect 2s',
    // Longer than any answer the apis give (REQUEST_DEADLINE_MS, 20 s; statement exports stream for longer).
    '  timeout client 5m',
    '  timeout server 5m',
    '  timeout http-keep-alive 60s',
    ...[502, 503, 504].map((status) => `  errorfile ${status} ${errorFile}`),
    // Its own answers carry an X-Request-Id as the apis' do (letters, digits and `-`: the documented pattern).
    '  unique-id-format lb-%{+X}o%Ts%ms-%pid-%rt',
    // Starts even while an instance's name does not resolve yet (compose), and finds it once it does.
    `  default-server init-addr last,libc,none${nameserver ? ' resolvers names' : ''}`,
  ];
  // Containers get a new address when they are re-created: names are resolved again, every 10 s, with this server.
  if (nameserver) lines.push('', 'resolvers names', `  nameserver dns ${nameserver}`, '  hold valid 10s');
  for (const p of ports) {
    lines.push('', `frontend ${p.name}`, `  bind ${host}:${p.port}`, '  http-after-response set-header X-Request-Id %[unique-id] unless { res.hdr(x-request-id) -m found }', `  default_backend ${p.name}`, '', `backend ${p.name}`, '  balance roundrobin', '  http-response set-header X-Api-Instance %[srv_name]');
    for (const s of p.servers) lines.push(`  server ${s.name} ${s.address} check inter 1s fall 2 rise 1`);
  }
  return `${lines.join('\n')}\n`;
}

/** Runs HAProxy in the foreground (`-db`), so the supervisor stops it like any child. */
export function startLoadBalancer(binary: string, dir: string, host: string, ports: BalancedPort[], log?: (line: string) => void): ManagedProcess {
  mkdirSync(dir, { recursive: true });
  const file = resolve(join(dir, 'haproxy.cfg'));
  const errorFile = resolve(join(dir, 'unavailable.http'));
  writeFileSync(errorFile, UNAVAILABLE_ANSWER);
  writeFileSync(file, haproxyConfig(host, ports, errorFile));
  return spawnService({ name: 'haproxy', command: binary, args: ['-f', file, '-db'], onLine: (line) => log?.(line) });
}
