import pg from 'pg';
import type { Logger } from 'pino';

/** The channel on which a revocation tells every api instance to forget a credential. */
export const REVOCATION_CHANNEL = 'credential_revoked';

/**
 * A credential's cache key: its kind and its prefix (API keys) or id (tenant keys, named by client tokens), or a
 * holder's id (the holder a token names, with the standing of its accounts). The database announces a holder's change
 * itself (`holder_standing.sql`), whatever code made it.
 */
export type CredentialRef = `pak:${string}` | `tnk:${string}` | `hld:${string}`;

export interface CredentialCache {
  /** The cached value, or `load()` (cached when no revocation arrived meanwhile; a null answer is cached unless `keepNull` is false). */
  get<T>(ref: CredentialRef, load: () => Promise<T>, options?: { keepNull?: boolean }): Promise<T>;
  /**
   * A value kept with `ref`'s entry and forgotten with it (a holder's account, with the holder): the cached one, or
   * `load()`, cached when `ref`'s entry is cached and no revocation arrived meanwhile.
   */
  getPart<T>(ref: CredentialRef, part: string, load: () => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/** Even with a healthy listener, an entry is read again after this long. */
const TTL_MS = 60_000;
/**
 * The most entries kept; the oldest is forgotten first (holders are many, and most are not in use). As many as the
 * verified tokens an api remembers (`VERIFIED_TOKENS_MAX`), each a holder's.
 */
const MAX_ENTRIES = 10_000;
const RELISTEN_MS = 1000;

interface Entry {
  value: unknown;
  expiresAt: number;
  parts: Map<string, unknown> | null;
}

/**
 * Verified credentials kept in process, so the request path does not read them from PostgreSQL each time: API keys,
 * tenant keys, and the holders tokens name, with their accounts' standing. A revocation, and any change of a holder or
 * of its account's standing, commits a NOTIFY (`REVOCATION_CHANNEL`) that every instance LISTENs to and evicts at once.
 * While the listening connection is down, nothing is cached (every check reads the database), so a revocation is never
 * missed.
 */
export function createCredentialCache(databaseUrl: string, logger: Logger): CredentialCache {
  const entries = new Map<CredentialRef, Entry>();
  /** Bumped by every eviction: a load that overlapped one is not cached (it may have read the credential before it). */
  let generation = 0;
  let listening = false;
  let closed = false;
  let client: pg.Client | null = null;

  const forgetAll = () => {
    generation++;
    entries.clear();
  };
  const live = (ref: CredentialRef): Entry | undefined => {
    const entry = entries.get(ref);
    return entry && listening && entry.expiresAt > Date.now() ? entry : undefined;
  };
  const keep = (ref: CredentialRef, entry: Entry) => {
    entries.delete(ref);
    if (entries.size >= MAX_ENTRIES) entries.delete(entries.keys().next().value!);
    entries.set(ref, entry);
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
    async get<T>(ref: CredentialRef, load: () => Promise<T>, { keepNull = true }: { keepNull?: boolean } = {}): Promise<T> {
      const hit = live(ref);
      if (hit) return hit.value as T;
      const before = generation;
      const value = await load();
      if (listening && generation === before && (keepNull || value !== null)) keep(ref, { value, expiresAt: Date.now() + TTL_MS, parts: null });
      return value;
    },
    async getPart<T>(ref: CredentialRef, part: string, load: () => Promise<T>): Promise<T> {
      const entry = live(ref);
      if (entry?.parts?.has(part)) return entry.parts.get(part) as T;
      const before = generation;
      const value = await load();
      // Only with the entry it belongs to, so that whatever forgets the entry forgets this too.
      if (entry && listening && generation === before && entries.get(ref) === entry) (entry.parts ??= new Map()).set(part, value);
      return value;
    },
    async close() {
      closed = true;
      forgetAll();
      await client?.end().catch(() => undefined);
    },
  };
}
