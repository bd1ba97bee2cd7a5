import type { EntityManager } from '@mikro-orm/postgresql';
import { DomainError, refusals } from './errors.ts';

export interface RateLimit {
  /** Bucket name prefix, e.g. `auth-doc`. */
  name: string;
  limit: number;
  windowSeconds: number;
}

/**
 * Fixed-window counters in PostgreSQL, so every api instance shares them. `hit` counts one event and throws 429
 * when the window's count is over the limit; `peek` only checks.
 */
export async function hit(em: EntityManager, rule: RateLimit, key: string): Promise<void> {
  const [row] = await em.execute<{ hits: number }[]>(
    `insert into rate_limit_hit (bucket, window_start, hits)
     values (?, to_timestamp(floor(extract(epoch from now()) / ?) * ?), 1)
     on conflict (bucket, window_start) do update set hits = rate_limit_hit.hits + 1
     returning hits`,
    [`${rule.name}:${key}`, rule.windowSeconds, rule.windowSeconds],
  );
  if (Math.random() < 0.01) await em.execute(`delete from rate_limit_hit where window_start < now() - interval '1 day'`);
  if (row!.hits > rule.limit) throw rateLimited(rule);
}
hit.raises = refusals('RATE_LIMITED');

export async function peek(em: EntityManager, rule: RateLimit, key: string): Promise<void> {
  const [row] = await em.execute<{ hits: number }[]>(
    `select hits from rate_limit_hit where bucket = ? and window_start = to_timestamp(floor(extract(epoch from now()) / ?) * ?)`,
    [`${rule.name}:${key}`, rule.windowSeconds, rule.windowSeconds],
  );
  if (row && row.hits >= rule.limit) throw rateLimited(rule);
}
peek.raises = refusals('RATE_LIMITED');

export async function reset(em: EntityManager, rule: RateLimit, key: string): Promise<void> {
  await em.execute('delete from rate_limit_hit where bucket = ?', [`${rule.name}:${key}`]);
}

/** The refusal of a rule's limit. */
export const rateLimited = (rule: RateLimit) => new DomainError('RATE_LIMITED', { windowSeconds: rule.windowSeconds });

/** When the fixed window that `at` (ms) falls in ends, in ms: the windows `hit` and `peek` count in. */
export const windowEnd = (rule: RateLimit, at: number) => (Math.floor(at / 1000 / rule.windowSeconds) + 1) * rule.windowSeconds * 1000;
