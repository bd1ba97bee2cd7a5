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
 * was sent. A request already sent is never sent again: the client sees the connection drop, as it would with one
 * api, and retries with its Idempotency-Key. `X-Forwarded-For` carries the client's address (the apis run with
 * TRUST_PROXY), and every answer names the instance that served it (`X-Api-Instance`). docker-compose.yml's load
 * balancer reads the same configuration (docker/haproxy.cfg, checked by test/cluster-topology.test.ts).
 */
export function haproxyConfig(host: string, ports: BalancedPort[], nameserver?: string): string {
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
    // Starts even while an instance's name does not resolve yet (compose), and finds it once it does.
    `  default-server init-addr last,libc,none${nameserver ? ' resolvers names' : ''}`,
  ];
  // Containers get a new address when they are re-created: names are resolved again, every 10 s, with this server.
  if (nameserver) lines.push('', 'resolvers names', `  nameserver dns ${nameserver}`, '  hold valid 10s');
  for (const p of ports) {
    lines.push('', `frontend ${p.name}`, `  bind ${host}:${p.port}`, `  default_backend ${p.name}`, '', `backend ${p.name}`, '  balance roundrobin', '  http-response set-header X-Api-Instance %[srv_name]');
    for (const s of p.servers) lines.push(`  server ${s.name} ${s.address} check inter 1s fall 2 rise 1`);
  }
  return `${lines.join('\n')}\n`;
}

/** Runs HAProxy in the foreground (`-db`), so the supervisor stops it like any child. */
export function startLoadBalancer(binary: string, dir: string, host: string, ports: BalancedPort[], log?: (line: string) => void): ManagedProcess {
  mkdirSync(dir, { recursive: true });
  const file = resolve(join(dir, 'haproxy.cfg'));
  writeFileSync(file, haproxyConfig(host, ports));
  return spawnService({ name: 'haproxy', command: binary, args: ['-f', file, '-db'], onLine: (line) => log?.(line) });
}
