import pg from 'pg';
import type { Logger } from 'pino';

/** The channel on which a revocation tells every api instance to forget a credential. */
export const REVOCATION_CHANNEL = 'credential_revoked';

/** A credential's cache key: its kind and its prefix (API keys) or id (tenant keys, named by client tokens). */
export type CredentialRef = `pak:${string}` | `tnk:${string}`;

export interface CredentialCache {
  /** The cached value, or `load()` (cached when no revocation arrived meanwhile). */
  get<T>(ref: CredentialRef, load: () => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/** Even with a healthy listener, an entry is read again after this long. */
const TTL_MS = 60_000;
const RELISTEN_MS = 1000;

/**
 * Verified credentials kept in process, so the request path does not read them from PostgreSQL each time. A
 * revocation commits a NOTIFY (`REVOCATION_CHANNEL`) that every instance LISTENs to and evicts at once. While the
 * listening connection is down, nothing is cached (every check reads the database), so a revocation is never missed.
 */
export function createCredentialCache(databaseUrl: string, logger: Logger): CredentialCache {
  const entries = new Map<CredentialRef, { value: unknown; expiresAt: number }>();
  /** Bumped by every eviction: a load that overlapped one is not cached (it may have read the credential before it). */
  let generation = 0;
  let listening = false;
  let closed = false;
  let client: pg.Client | null = null;

  const forgetAll = () => {
    generation++;
    entries.clear();
  };

  async function listen(): Promise<void> {
    while (!closed) {
      const c = new pg.Client({ connectionString: databaseUrl });
      try {
        c.on('notification', (n) => {
          generation++;
          entries.delete(n.payload as CredentialRef);
        });
        c.on('error', (err) => {
          logger.warn({ err }, 'credential revocation listener lost; credentials are read from the database until it is back');
          listening = false;
          forgetAll();
          void c.end().catch(() => undefined);
          if (!closed) setTimeout(() => void listen(), RELISTEN_MS);
        });
        await c.connect();
        await c.query(`listen ${REVOCATION_CHANNEL}`);
        client = c;
        listening = true;
        return;
      } catch (err) {
        logger.warn({ err }, 'credential revocation listener unavailable; retrying');
        await c.end().catch(() => undefined);
        await new Promise((r) => setTimeout(r, RELISTEN_MS));
      }
    }
  }
  void listen();

  return {
    async get<T>(ref: CredentialRef, load: () => Promise<T>): Promise<T> {
      const hit = entries.get(ref);
      if (hit && listening && hit.expiresAt > Date.now()) return hit.value as T;
      const before = generation;
      const value = await load();
      if (listening && generation === before) entries.set(ref, { value, expiresAt: Date.now() + TTL_MS });
      return value;
    },
    async close() {
      closed = true;
      forgetAll();
      await client?.end().catch(() => undefined);
    },
  };
}
