import { readFileSync } from 'node:fs';
import { describe, expect, test } from '@jest/globals';
import { parse } from 'yaml';
import {
  API_INSTANCES,
  SHARED_APP_ENV,
  TEMPORAL_DATABASES,
  TEMPORAL_HISTORY_SHARDS,
  TEMPORAL_SERVER_VERSION,
  TEMPORAL_SQL_PLUGIN,
  TEMPORAL_UI_VERSION,
  WORKER_INSTANCES,
} from '../scripts/lib/cluster-topology.ts';
import { balancedApis, haproxyConfig, UNAVAILABLE_ANSWER } from '../scripts/lib/load-balancer.ts';

/**
 * docker-compose.yml and `npm run start:cluster` describe one topology: the same Temporal server, UI and schema tools,
 * the same history shards and databases, as many api and worker processes, the same load balancer configuration, and
 * every variable the instances must share set for all of them. Parsed with a YAML parser (anchors and merges resolved).
 */
interface Service {
  image?: string;
  command?: string[];
  environment?: Record<string, string>;
  deploy?: { replicas?: number };
  ports?: string[];
  volumes?: string[];
}
const compose = parse(readFileSync('docker-compose.yml', 'utf8'), { merge: true }) as { services: Record<string, Service> };
const services = compose.services;
const replicas = (s: Service) => s.deploy?.replicas ?? 1;
/** `${NAME:-default}` → default. */
const defaultOf = (value: string | undefined) => /^\$\{[A-Z_]+:-([^}]*)\}$/.exec(value ?? '')?.[1];

describe('docker-compose.yml runs the topology the cluster script runs', () => {
  test('the same Temporal server, schema tool and UI versions', () => {
    expect(services.temporal!.image).toBe(`temporalio/server:${TEMPORAL_SERVER_VERSION}`);
    expect(services['temporal-schema']!.image).toBe(`temporalio/admin-tools:${TEMPORAL_SERVER_VERSION}`);
    expect(services['temporal-namespace']!.image).toBe(`temporalio/admin-tools:${TEMPORAL_SERVER_VERSION}`);
    expect(services['temporal-ui']!.image).toBe(`temporalio/ui:${TEMPORAL_UI_VERSION}`);
  });

  test('the same history shards, databases and persistence plugin', () => {
    const server = services.temporal!.environment!;
    expect(Number(defaultOf(server.NUM_HISTORY_SHARDS))).toBe(TEMPORAL_HISTORY_SHARDS);
    expect(server.DB).toBe(TEMPORAL_SQL_PLUGIN);
    expect([server.DBNAME, server.VISIBILITY_DBNAME]).toEqual([TEMPORAL_DATABASES.history, TEMPORAL_DATABASES.visibility]);
    const schema = services['temporal-schema']!.environment!;
    expect(schema.SQL_PLUGIN).toBe(TEMPORAL_SQL_PLUGIN);
    expect([schema.DBNAME, schema.VISIBILITY_DBNAME]).toEqual([TEMPORAL_DATABASES.history, TEMPORAL_DATABASES.visibility]);
  });

  test('as many api and worker processes', () => {
    const count = (match: (name: string, s: Service) => boolean) => Object.entries(services).filter(([name, s]) => match(name, s)).reduce((n, [, s]) => n + replicas(s), 0);
    expect(count((name) => /^api(-\d+)?$/.test(name))).toBe(API_INSTANCES);
    expect(count((_name, s) => (s.command ?? []).includes('worker/main.ts'))).toBe(WORKER_INSTANCES);
  });

  test('the load balancer publishes the apis on 3000 and 3001 with the configuration the script generates', () => {
    const lb = services['load-balancer']!;
    expect(lb.image).toMatch(/^haproxy:2\.6/);
    expect(lb.ports).toEqual(['3000:3000', '3001:3001']);
    const apis = Object.keys(services)
      .filter((name) => /^api-\d+$/.test(name))
      .map((name) => ({ name, holder: `${name}:3000`, integration: `${name}:3001` }));
    const file = readFileSync('docker/haproxy.cfg', 'utf8').split('\n').filter((line) => !line.startsWith('#')).join('\n');
    expect(file).toBe(haproxyConfig('0.0.0.0', balancedApis({ holder: 3000, integration: 3001 }, apis), '/usr/local/etc/haproxy/unavailable.http', '127.0.0.11:53'));
    expect(readFileSync('docker/unavailable.http', 'utf8')).toBe(UNAVAILABLE_ANSWER);
    expect(lb.volumes).toEqual(['./docker/haproxy.cfg:/usr/local/etc/haproxy/haproxy.cfg:ro', './docker/unavailable.http:/usr/local/etc/haproxy/unavailable.http:ro']);
    // Only the load balancer takes the clients' ports.
    expect(Object.entries(services).filter(([, s]) => (s.ports ?? []).some((p) => /^3000:|^3001:/.test(p))).map(([name]) => name)).toEqual(['load-balancer']);
  });

  test('every variable the instances must share is set for every api and worker', () => {
    for (const [name, s] of Object.entries(services)) {
      if (!/^api-\d+$/.test(name) && !(s.command ?? []).includes('worker/main.ts')) continue;
      expect([name, SHARED_APP_ENV.filter((v) => !(v in (s.environment ?? {})))]).toEqual([name, []]);
    }
  });
});
