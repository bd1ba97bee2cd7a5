/**
 * The production topology in figures, read by `npm run start:cluster` (scripts/lib/cluster.ts) and compared with
 * docker-compose.yml by test/cluster-topology.test.ts, so the two describe the same cluster.
 */

/**
 * The Temporal server both run: the newest 1.30 release this machine's Go builds with `go install` (1.31 and later
 * need a newer Go), and the tag of the `temporalio/server` and `temporalio/admin-tools` images compose pulls.
 */
export const TEMPORAL_SERVER_VERSION = '1.30.4';
/** The Temporal UI: the ui-server the CLI embeds (its Go module carries the built pages), and compose's `temporalio/ui` tag. */
export const TEMPORAL_UI_VERSION = '2.42.1';
/** Fixed when Temporal's database is created: changing it later needs a new database. */
export const TEMPORAL_HISTORY_SHARDS = 4;
/** Temporal's two databases, beside the platform's on the same PostgreSQL, and the persistence plugin that reads them. */
export const TEMPORAL_DATABASES = { history: 'temporal', visibility: 'temporal_visibility' } as const;
export const TEMPORAL_SQL_PLUGIN = 'postgres12';

/** How many of each stateless process run behind the one address. */
export const API_INSTANCES = 2;
export const WORKER_INSTANCES = 2;

/**
 * The variables that must be the same in every api and worker instance, or the instances disagree: on the database and
 * Temporal they share, the secrets that sign tokens and key credential hashes, the Pix key the charges are signed with,
 * the public origins locations are built on, and the client address behind the load balancer. The cluster script sets
 * each one for all instances; compose's `x-app` environment, which every app service shares, names them all.
 */
export const SHARED_APP_ENV = [
  'DATABASE_URL',
  'TEMPORAL_ADDRESS',
  'TEMPORAL_NAMESPACE',
  'TEMPORAL_TASK_QUEUE',
  'JWT_SECRET',
  'KEY_PEPPER',
  'PIX_PROVIDER_URL',
  'PIX_PROVIDER_API_KEY',
  'PIX_PROVIDER_WEBHOOK_SECRET',
  'PIX_SIGNING_KEY',
  'PUBLIC_BASE_URL',
  'PUBLIC_API_URL',
  'TRUST_PROXY',
] as const;

/** The ports clients use (the load balancer's, as `npm start`'s), and where each api instance listens behind it. */
export const CLUSTER_PORTS = {
  holder: 3000,
  integration: 3001,
  psp: 3002,
  temporal: 7233,
  temporalUi: 8233,
  /** api instance i (from 0) listens on holder 3010 + 10 i and integration 3011 + 10 i. */
  apiBase: 3010,
} as const;

export const apiInstancePorts = (base: number, i: number) => ({ holder: base + 10 * i, integration: base + 10 * i + 1 });
