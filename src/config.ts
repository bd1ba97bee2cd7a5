import { createPrivateKey, randomBytes } from 'node:crypto';
import { join, resolve } from 'node:path';
import { signingAlgorithmOf } from './shared/jws.ts';
import { certificateChainProblem } from './shared/signing-certificate.ts';
import { keptFile } from './shared/kept-file.ts';
import { z } from './shared/zod.ts';

/** The files, in the data directory, of the secrets a machine generates for itself when the environment does not set them. */
const GENERATED_SECRET_FILES = {
  JWT_SECRET: 'jwt-secret',
  KEY_PEPPER: 'key-pepper',
  PIX_PROVIDER_WEBHOOK_SECRET: 'pix-provider-webhook-secret',
  PIX_PROVIDER_API_KEY: 'pix-provider-api-key',
} as const;

/** The embedded PostgreSQL that `npm start` runs when DATABASE_URL is not set. */
export const EMBEDDED_DATABASE = { port: 5433, user: 'postgres', password: 'postgres', database: 'banking' } as const;

/** The longest path of a Unix socket (sun_path holds 108 bytes on Linux, with its NUL), less room to spare. */
const MAX_SOCKET_PATH = 100;

/**
 * Where an embedded server's Unix socket is: its own data directory, so that servers of other ports and checkouts never
 * share one; null when that path would be too long for a socket (a deep checkout): its clients then use TCP.
 */
export function embeddedSocketDirectory(dataDir: string, port: number): string | null {
  const dir = resolve(dataDir);
  return `${dir}/.s.PGSQL.${port}`.length <= MAX_SOCKET_PATH ? dir : null;
}

/**
 * An embedded server's URL: by its Unix socket (the directory percent-encoded as the host, as pg and MikroORM read it),
 * else 127.0.0.1. On this machine a query over the socket costs about half what it costs over loopback TCP (pgbench -S,
 * 4 clients: 14,207 against 8,017 queries/s), and a payment's request makes several.
 */
export function embeddedDatabaseUrl(dataDir: string, port: number, database: string): string {
  const socketDir = embeddedSocketDirectory(dataDir, port);
  return `postgres://${EMBEDDED_DATABASE.user}:${EMBEDDED_DATABASE.password}@${socketDir ? encodeURIComponent(socketDir) : '127.0.0.1'}:${port}/${database}`;
}

/** The default DATABASE_URL: the server `npm start` runs in ./data/pg, reached by its socket. */
export const EMBEDDED_DATABASE_URL = embeddedDatabaseUrl(join('data', 'pg'), EMBEDDED_DATABASE.port, EMBEDDED_DATABASE.database);

const port = z.coerce.number().int().min(0).max(65535);
const flag = z.enum(['0', '1', 'true', 'false']).transform((v) => v === '1' || v === 'true');
const positiveMs = z.coerce.number().int().positive();
const DAY_MS = 86_400_000;
const secret = z.string().min(32, 'must be at least 32 characters');
/** A Standard Webhooks secret: `whsec_` and the base64 of at least 24 random bytes (the key itself). */
const webhookSecret = z
  .string()
  .refine((s) => /^whsec_[A-Za-z0-9+/]+={0,2}$/.test(s) && Buffer.from(s.slice('whsec_'.length), 'base64').length >= 24, 'must be whsec_ and the base64 of at least 24 bytes');

/** A `host` or `host:port` exactly as a URL writes it (lowercase, no default port), as a location's host is compared. */
function isHostAndPort(entry: string): boolean {
  return URL.parse(`https://${entry}`)?.host === entry;
}

function isSigningKey(pem: string): boolean {
  try {
    return signingAlgorithmOf(createPrivateKey(pem)) !== null;
  } catch {
    return false;
  }
}

const schema = z
  .object({
    NODE_ENV: z.enum(['development', 'test', 'production']).default('development'),
    HOST: z.string().min(1).default('127.0.0.1'),
    PORT: port.default(3000),
    API_PORT: port.default(3001),
    PUBLIC_BASE_URL: z.url().optional(),
    /** Where integrators reach the integration API (the server of its OpenAPI document); default `http://HOST:API_PORT`. */
    PUBLIC_API_URL: z.url().optional(),
    DATABASE_URL: z
      .url()
      .refine((u) => /^postgres(ql)?:\/\//.test(u), 'must be a postgres:// URL')
      .default(EMBEDDED_DATABASE_URL),
    DATABASE_POOL_MAX: z.coerce.number().int().min(1).max(200).default(20),
    TEMPORAL_ADDRESS: z.string().regex(/^[^\s:]+:\d+$/, 'must be host:port').default('127.0.0.1:7233'),
    TEMPORAL_NAMESPACE: z.string().min(1).default('default'),
    TEMPORAL_TASK_QUEUE: z.string().min(1).default('banking'),
    /**
     * Sign holder tokens (JWT_SECRET) and key the hashes of credentials (KEY_PEPPER). Unset: generated once into
     * ./data (32 random bytes, mode 0600) and kept across restarts, shared by the processes of one machine; production
     * must set both.
     */
    JWT_SECRET: secret.optional(),
    KEY_PEPPER: secret.optional(),
    /**
     * Keys the signatures of the Pix provider's notifications (`POST /v1/pix/provider/notifications`), shared with the
     * provider. Unset: generated and kept in ./data like JWT_SECRET; production must set it.
     */
    PIX_PROVIDER_WEBHOOK_SECRET: webhookSecret.optional(),
    /**
     * The Pix provider's API (`src/pix/http-provider.ts`): where it is, the bearer credential the platform presents to it
     * (unset: generated and kept in ./data like JWT_SECRET, where the sandbox PSP reads it too; production must set
     * it), and how long one request may take before it is retried or given up.
     */
    PIX_PROVIDER_URL: z
      .url()
      .refine((u) => /^https?:\/\//.test(u), 'must be an http(s):// URL')
      .default('http://127.0.0.1:3002'),
    PIX_PROVIDER_API_KEY: secret.optional(),
    PIX_PROVIDER_TIMEOUT_MS: positiveMs.default(3_000),
    /** Notifications of the Pix provider accepted per client address per minute. */
    PIX_PROVIDER_NOTIFICATIONS_MAX_PER_MINUTE: z.coerce.number().int().positive().default(6000),
    /**
     * The provider's notifications applied at once per api process, and how many more wait their turn (beyond: 503,
     * which the provider sends again). A provider sends them in bursts (the sandbox PSP 16 at a time); applied all at
     * once, a burst took the database's connections and cores from the payments beside it for a quarter of a second,
     * where their p99 came from (bench/README.md).
     */
    PIX_PROVIDER_NOTIFICATIONS_CONCURRENCY: z.coerce.number().int().min(1).max(64).default(2),
    PIX_PROVIDER_NOTIFICATIONS_MAX_WAITING: z.coerce.number().int().min(0).max(10_000).default(256),
    SANDBOX: flag.default(false),
    LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
    JSON_BODY_LIMIT: z.string().regex(/^\d+(b|kb|mb)$/i, 'must look like 100kb').default('100kb'),
    /** The body of a batch payout (`POST /v1/pix-accounts/:accountId/batches`): up to 5,000 items. */
    BATCH_JSON_BODY_LIMIT: z.string().regex(/^\d+(b|kb|mb)$/i, 'must look like 4mb').default('4mb'),
    /** Bundled workflow code (tests and images build it once instead of at every worker start). */
    WORKFLOW_BUNDLE_PATH: z.string().min(1).optional(),
    /** Seconds a holder JWT lives; the interface fixes 1 h and 24 h, tests shorten them. */
    JWT_TTL_SECONDS: z.coerce.number().int().positive().default(3600),
    CLIENT_JWT_TTL_SECONDS: z.coerce.number().int().positive().default(86400),
    /** Express `trust proxy`: `false`, `loopback`, a hop count or a list of proxy addresses; decides the client address. */
    TRUST_PROXY: z.string().default('false'),
    /**
     * Failed logins allowed in 15 minutes: per document (password), and per tenant and client address, counted apart
     * for passwords (`/authenticate`) and tenant keys (`/authenticate/clients`).
     */
    AUTH_MAX_FAILURES_PER_DOCUMENT: z.coerce.number().int().positive().default(5),
    AUTH_MAX_FAILURES_PER_ADDRESS: z.coerce.number().int().positive().default(30),
    /** `/authenticate/clients` calls allowed per tenant API key per minute. */
    CLIENT_AUTH_MAX_PER_MINUTE: z.coerce.number().int().positive().default(600),
    /** Webhook delivery: the receiver's time to answer, and the retry schedule (doubling from initial to max, for the window). */
    WEBHOOK_TIMEOUT_MS: positiveMs.default(10_000),
    WEBHOOK_RETRY_INITIAL_MS: positiveMs.default(5_000),
    WEBHOOK_RETRY_MAX_MS: positiveMs.default(3_600_000),
    WEBHOOK_RETRY_WINDOW_MS: positiveMs.default(86_400_000),
    /** Redelivery calls (`…/deliveries/:eventId/redeliver`) allowed per API key and webhook endpoint per minute. */
    WEBHOOK_REDELIVER_MAX_PER_MINUTE: z.coerce.number().int().positive().default(60),
    /** Whether this worker relays the event outbox to webhook deliveries (several may; they share the work). */
    OUTBOX_RELAY: flag.default(true),
    /** Extra CA certificate (PEM file) trusted for webhook receivers, besides the system's (tests use a self-signed one). */
    WEBHOOK_CA_FILE: z.string().min(1).optional(),
    /**
     * Pix: how long a payout's workflow waits for the provider's notification before asking the provider (the
     * fallback), and the longest wait between two such queries (they double up to it after three).
     */
    /**
     * Pix debits in flight at once per api process, and the most one statement debits together (as the TEV's). Two
     * lanes, not four: every debit of a tenant credits its settlement account, so a third and fourth statement only
     * waited for that row's lock, and their requests would have left in the next batch (bench/README.md: 32 clients,
     * one tenant, 4 lanes 319–415 payments/s, 2 lanes 512–537, 1 lane 454–546 in one sitting).
     */
    PIX_BATCH_LANES: z.coerce.number().int().min(1).max(32).default(2),
    PIX_BATCH_MAX: z.coerce.number().int().min(1).max(256).default(16),
    /**
     * Batch payouts: the items one step of a batch's workflow pays in one transaction (per kind), and the most of its
     * Pix debited and not yet final at once: what one batch may take of the database and of Temporal beside the rest.
     */
    BATCH_CHUNK_SIZE: z.coerce.number().int().min(1).max(500).default(100),
    BATCH_PIX_IN_FLIGHT: z.coerce.number().int().min(1).max(5000).default(200),
    /**
     * While the api's request path is posting (a TEV or a Pix debit in the last `BATCH_YIELD_MS`), a batch gives way:
     * a step pays at most `BATCH_YIELD_CHUNK` items of each kind, keeps at most `BATCH_YIELD_PIX_IN_FLIGHT` of its Pix
     * in flight (each one's settlement is a workflow, a provider call and a notification, which the request path's
     * processes share the cores with), and pauses `BATCH_YIELD_MS` after paying, so the holders' requests keep their
     * latency (issue 26). Alone, a batch runs at full speed. During a Pix batch the unrelated TEVs' p99 was 2.17 times its
     * quiet figure with 20 Pix in flight, and 1.84 and 1.98 with 10, in another sitting (bench/batch.ts, bench/README.md).
     */
    BATCH_YIELD_CHUNK: z.coerce.number().int().min(1).max(500).default(10),
    BATCH_YIELD_PIX_IN_FLIGHT: z.coerce.number().int().min(1).max(5000).default(10),
    BATCH_YIELD_MS: z.coerce.number().int().min(0).max(10_000).default(50),
    PIX_NOTIFICATION_WAIT_MS: positiveMs.default(15_000),
    PIX_QUERY_MAX_WAIT_MS: positiveMs.default(600_000),
    /** The sandbox PSP settles a payout this long after submission (and refunds as long after that). */
    SANDBOX_PIX_SETTLE_MS: positiveMs.default(2_000),
    /**
     * The private key (PEM) that signs the payloads of the platform's dynamic BR Codes; its public half is published at
     * `/pix/jwks.json`. Unset: a key generated once and kept in ./data, for one machine (several api instances must share
     * one key, so production sets it). A literal `\n` stands for a line break.
     */
    PIX_SIGNING_KEY: z
      .string()
      .transform((pem) => pem.replaceAll('\\n', '\n'))
      .refine(isSigningKey, 'must be a PEM private key: RSA of at least 2048 bits, or EC P-256')
      .optional(),
    /**
     * The certificate chain (PEM, the signing key's certificate first, then its issuers) published beside the key in
     * `/pix/jwks.json` (`x5c`) and named by every payload's header (`x5t`, `x5t#S256`). Production: ICP-Brasil.
     */
    PIX_SIGNING_CERT: z
      .string()
      .transform((pem) => pem.replaceAll('\\n', '\n'))
      .optional(),
    /**
     * Hosts (`host` or `host:port`, comma-separated) whose dynamic BR Code locations are read whatever their address and
     * port, besides the platform's own. In the sandbox they are the only others read.
     */
    PIX_LOCATION_ALLOWED_HOSTS: z
      .string()
      .transform((list) => list.split(',').map((host) => host.trim().toLowerCase()).filter((host) => host !== ''))
      .pipe(z.array(z.string().refine(isHostAndPort, 'each entry must be host or host:port, e.g. psp.example.com or 10.0.0.5:8443 (no scheme, path or :443)')))
      .default([]),
    /** `GET /pix/cob/:txid` calls allowed per client address per minute. */
    PIX_LOCATION_MAX_PER_MINUTE: z.coerce.number().int().positive().default(600),
    /** The sandbox resolves a TEV of ,97 (DONE) or ,98 (FAILED) this long after answering `submitted_unknown`. */
    SANDBOX_TEV_RESOLVE_MS: positiveMs.default(3_000),
    /** How long a payment waits for its approver before the request expires (dual approval). Default 24 h. */
    APPROVAL_TTL_MS: positiveMs.default(86_400_000),
    /**
     * How long a new trusted contact waits before it counts (exempt from the night limit): 24 h by the Central Bank's
     * rules, and production allows 24 to 48 h. Development and tests may shorten it to watch a contact become trusted.
     */
    TRUSTED_CONTACT_DELAY_MS: positiveMs.default(DAY_MS),
    /**
     * Hours before a holder's raised transaction limit (or later night start) is in force: the Pix rules ask for at
     * least 24 and at most 48.
     */
    LIMIT_INCREASE_DELAY: z.coerce.number().min(24, 'must be at least 24 (hours)').max(48, 'must be at most 48 (hours)').default(24),
    /**
     * A scheduled payment's occurrence refused for insufficient balance is tried again this many times, each this long
     * after the last (3 times, 3 hours apart), within its São Paulo day; then it fails and the schedule goes on.
     */
    SCHEDULED_PAYMENT_RETRIES: z.coerce.number().int().min(0).max(10).default(3),
    SCHEDULED_PAYMENT_RETRY_INTERVAL_MS: positiveMs.default(3 * 3_600_000),
    /** An occurrence that starts more than this after its due time (the platform was away) is recorded `late`. */
    SCHEDULED_PAYMENT_LATE_AFTER_MS: positiveMs.default(60_000),
    /** Longest a request is answered in: then 503 UNAVAILABLE (a dependency, usually the database, does not answer). */
    REQUEST_DEADLINE_MS: positiveMs.default(20_000),
    /** How long an HTTP caller waits for a TEV outcome before getting `submitted_unknown`. */
    TEV_RESPONSE_DEADLINE_MS: positiveMs.default(5000),
    /** Most TEV requests settled in one statement and transaction (`settle_tev_batch`); 1 settles each alone. */
    TEV_BATCH_MAX: z.coerce.number().int().min(1).max(100).default(16),
    /** Most settlement statements in flight at once, each on its own pool connection; more requests wait and batch. */
    TEV_BATCH_LANES: z.coerce.number().int().min(1).max(100).default(4),
    /** Largest single TEV; above it the transfer is rejected (422, AMOUNT_ABOVE_LIMIT). Default R$ 1,000,000.00. */
    TEV_MAX_AMOUNT_CENTS: z.coerce.bigint().positive().default(100_000_000n),
  })
  .superRefine((env, ctx) => {
    if (env.PIX_SIGNING_CERT !== undefined) {
      const problem = certificateChainProblem(env.PIX_SIGNING_CERT, env.PIX_SIGNING_KEY);
      if (problem) ctx.addIssue({ code: 'custom', path: ['PIX_SIGNING_CERT'], message: problem });
    }
    // Every charge's location is on this host, and some BR Code readers refuse a location with a port.
    if (env.NODE_ENV === 'production' && (env.PUBLIC_BASE_URL === undefined || URL.parse(env.PUBLIC_BASE_URL)?.port !== '')) {
      ctx.addIssue({ code: 'custom', path: ['PUBLIC_BASE_URL'], message: "production requires it without a port: it is the host of the charges' BR Code locations, which payers read on https's own port" });
    }
  })
  .superRefine((env, ctx) => {
    if (env.NODE_ENV !== 'production') return;
    for (const name of ['JWT_SECRET', 'KEY_PEPPER'] as const) {
      if (env[name] === undefined) {
        ctx.addIssue({ code: 'custom', path: [name], message: 'production requires it: the same value, of at least 32 characters, in every process' });
      }
    }
    if (env.TRUSTED_CONTACT_DELAY_MS < DAY_MS || env.TRUSTED_CONTACT_DELAY_MS > 2 * DAY_MS) {
      ctx.addIssue({ code: 'custom', path: ['TRUSTED_CONTACT_DELAY_MS'], message: 'production requires 24 to 48 hours (86400000 to 172800000): a new contact counts only 24 h after it is added' });
    }
    if (env.PIX_PROVIDER_API_KEY === undefined) {
      ctx.addIssue({ code: 'custom', path: ['PIX_PROVIDER_API_KEY'], message: 'production requires it: the credential the Pix provider gave the platform (at least 32 characters)' });
    }
    if (env.PIX_PROVIDER_WEBHOOK_SECRET === undefined) {
      ctx.addIssue({ code: 'custom', path: ['PIX_PROVIDER_WEBHOOK_SECRET'], message: 'production requires it: the secret the Pix provider signs its notifications with (whsec_…)' });
    }
  });

type Secrets = { [name in keyof typeof GENERATED_SECRET_FILES]: string };
export type Config = Omit<z.infer<typeof schema>, keyof Secrets> & Secrets & { publicBaseUrl: string; publicApiUrl: string };

export class ConfigError extends Error {
  readonly variables: string[];
  constructor(issues: z.core.$ZodIssue[]) {
    const lines = issues.map((i) => `${i.path.join('.') || '(environment)'}: ${i.message}`);
    super(`Invalid configuration:\n  ${lines.join('\n  ')}`);
    this.name = 'ConfigError';
    this.variables = issues.map((i) => String(i.path[0]));
  }
}

/** How a generated secret writes its 32 random bytes: as its variable takes them. */
const SECRET_FORMS: Record<keyof Secrets, (bytes: Buffer) => string> = {
  JWT_SECRET: (bytes) => bytes.toString('base64url'),
  KEY_PEPPER: (bytes) => bytes.toString('base64url'),
  PIX_PROVIDER_WEBHOOK_SECRET: (bytes) => `whsec_${bytes.toString('base64')}`,
  PIX_PROVIDER_API_KEY: (bytes) => bytes.toString('base64url'),
};

/**
 * A secret of this machine: the one kept in `dataDir`, or a new one that every later load reads (the sandbox PSP reads
 * the two it shares with the platform this way).
 */
export const generatedSecret = (dataDir: string, name: keyof Secrets) =>
  keptFile(join(dataDir, GENERATED_SECRET_FILES[name]), () => SECRET_FORMS[name](randomBytes(32))).trim();

/**
 * Reads the environment; empty strings count as unset so `VAR=` falls back to the default. The secrets the environment
 * does not set (never in production) are the ones generated and kept in `dataDir`.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env, dataDir = 'data'): Config {
  const present = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const parsed = schema.safeParse(present);
  if (!parsed.success) throw new ConfigError(parsed.error.issues);
  const c = parsed.data;
  return {
    ...c,
    JWT_SECRET: c.JWT_SECRET ?? generatedSecret(dataDir, 'JWT_SECRET'),
    KEY_PEPPER: c.KEY_PEPPER ?? generatedSecret(dataDir, 'KEY_PEPPER'),
    PIX_PROVIDER_WEBHOOK_SECRET: c.PIX_PROVIDER_WEBHOOK_SECRET ?? generatedSecret(dataDir, 'PIX_PROVIDER_WEBHOOK_SECRET'),
    PIX_PROVIDER_API_KEY: c.PIX_PROVIDER_API_KEY ?? generatedSecret(dataDir, 'PIX_PROVIDER_API_KEY'),
    publicBaseUrl: (c.PUBLIC_BASE_URL ?? `http://${c.HOST}:${c.PORT}`).replace(/\/$/, ''),
    publicApiUrl: (c.PUBLIC_API_URL ?? `http://${c.HOST}:${c.API_PORT}`).replace(/\/$/, ''),
  };
}

/** For process entry points: a bad environment ends the process with a message naming the variable. */
export function loadConfigOrExit(env: NodeJS.ProcessEnv = process.env): Config {
  try {
    return loadConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(78);
    }
    throw err;
  }
}
