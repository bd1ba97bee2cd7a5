import type { EntityManager } from '@mikro-orm/postgresql';
import type pg from 'pg';

/**
 * The SQL of webhook deliveries and their attempts. A batch runs on one session of its own (`pg.PoolClient`): it
 * holds the endpoint's shared advisory lock for as long as it sends, which is what a deletion waits for.
 */

export interface EndpointTarget {
  enabled: boolean;
  url: string;
  auth_token_ciphertext: string;
}

export interface ClaimedDelivery {
  id: string;
  event_id: string;
  type: string;
  data: unknown;
  attempts: number;
  round: number;
  first_attempt_at: Date;
}

/** A delivery's result after an attempt: its attempt row and what becomes of it. */
export interface AttemptRecord {
  deliveryId: string;
  attemptId: string;
  attempt: number;
  round: number;
  attemptedAt: Date;
  statusCode: number | null;
  durationMs: number;
  error: string | null;
  /** DELIVERED, FAILED (window over), or PENDING again at `nextAttemptAt`. */
  status: 'DELIVERED' | 'FAILED' | 'PENDING';
  nextAttemptAt: Date | null;
}

const lockKey = (endpointId: string) => `webhook-endpoint:${endpointId}`;

export async function lockEndpointShared(db: pg.PoolClient, endpointId: string): Promise<void> {
  await db.query('select pg_advisory_lock_shared(hashtext($1))', [lockKey(endpointId)]);
}

export async function unlockEndpointShared(db: pg.PoolClient, endpointId: string): Promise<void> {
  await db.query('select pg_advisory_unlock_shared(hashtext($1))', [lockKey(endpointId)]);
}

/** Waits until no batch of the endpoint is sending (each holds the shared lock while it does). */
export async function waitForBatchesInFlight(db: pg.PoolClient, endpointId: string): Promise<void> {
  await db.query('select pg_advisory_lock(hashtext($1))', [lockKey(endpointId)]);
  await db.query('select pg_advisory_unlock(hashtext($1))', [lockKey(endpointId)]);
}

export async function endpointTarget(db: pg.PoolClient, endpointId: string): Promise<EndpointTarget | null> {
  const { rows } = await db.query<EndpointTarget>('select enabled, url, auth_token_ciphertext from webhook_endpoint where id = $1', [endpointId]);
  return rows[0] ?? null;
}

/**
 * Claims up to `limit` due deliveries, oldest first, for `leaseMs`: their next attempt moves past the lease, so a
 * retried batch (its activity timed out) does not send them again while this one still may.
 */
export async function claimDueDeliveries(db: pg.PoolClient, endpointId: string, limit: number, leaseMs: number): Promise<ClaimedDelivery[]> {
  const { rows } = await db.query<ClaimedDelivery>(
    `with due as (
       select id from webhook_delivery
        where endpoint_id = $1 and status = 'PENDING' and next_attempt_at <= now()
        order by next_attempt_at limit $2 for update skip locked)
     update webhook_delivery d
        set next_attempt_at = now() + make_interval(secs => $3::double precision / 1000),
            first_attempt_at = coalesce(d.first_attempt_at, now())
       from due, event_outbox ev
      where d.id = due.id and ev.id = d.event_id
     returning d.id, d.event_id, ev.type, ev.data, d.attempts, d.round, d.first_attempt_at`,
    [endpointId, limit, leaseMs],
  );
  return rows;
}

/** Every attempt of the batch, and each delivery's new state, in one transaction. A cancelled delivery stays so. */
export async function recordAttempts(db: pg.PoolClient, records: AttemptRecord[]): Promise<void> {
  if (records.length === 0) return;
  const attempts: unknown[] = [];
  const deliveries: unknown[] = [];
  for (const r of records) {
    attempts.push(r.attemptId, r.deliveryId, r.attempt, r.round, r.attemptedAt, r.statusCode, r.durationMs, r.error);
    deliveries.push(r.deliveryId, r.status, r.nextAttemptAt);
  }
  await db.query('begin');
  try {
    await db.query(
      `insert into webhook_attempt (id, delivery_id, attempt, round, attempted_at, status_code, duration_ms, error)
       values ${records.map((_, i) => `($${i * 8 + 1}, $${i * 8 + 2}, $${i * 8 + 3}, $${i * 8 + 4}, $${i * 8 + 5}, $${i * 8 + 6}, $${i * 8 + 7}, $${i * 8 + 8})`).join(', ')}`,
      attempts,
    );
    await db.query(
      `update webhook_delivery d
          set attempts = d.attempts + 1, status = v.status, next_attempt_at = v.next_attempt_at,
              finished_at = case when v.status = 'PENDING' then null else now() end
         from (values ${records.map((_, i) => `($${i * 3 + 1}, $${i * 3 + 2}, $${i * 3 + 3}::timestamptz)`).join(', ')}) v(id, status, next_attempt_at)
        where d.id = v.id and d.status = 'PENDING'`,
      deliveries,
    );
    await db.query('commit');
  } catch (err) {
    await db.query('rollback');
    throw err;
  }
}

/** Milliseconds until the endpoint's earliest pending delivery is due (0 if one is due now); null if none is pending. */
export async function msUntilNextDue(db: pg.PoolClient, endpointId: string): Promise<number | null> {
  const { rows } = await db.query<{ ms: number | null }>(
    `select greatest(0, extract(epoch from min(next_attempt_at) - now()) * 1000)::float8 as ms
       from webhook_delivery where endpoint_id = $1 and status = 'PENDING'`,
    [endpointId],
  );
  return rows[0]?.ms ?? null;
}

/**
 * The delivery of an event to an endpoint with its current round, locked for the rest of the transaction (redeliveries
 * of it queue here, and each sees what the one before decided); null when there is none.
 */
export async function lockDelivery(em: EntityManager, endpointId: string, eventId: string): Promise<{ id: string; round: number; status: string } | null> {
  const [row] = await em.execute<{ id: string; round: number; status: string }[]>(
    'select id, round, status from webhook_delivery where endpoint_id = ? and event_id = ? for update',
    [endpointId, eventId],
  );
  return row ?? null;
}

/** A delivery back to PENDING for a new round of attempts, due now; answers the new round. */
export async function reopenDelivery(em: EntityManager, deliveryId: string): Promise<number> {
  const [row] = await em.execute<{ round: number }[]>(
    `update webhook_delivery set status = 'PENDING', finished_at = null, first_attempt_at = null, round = round + 1, next_attempt_at = now()
      where id = ? returning round`,
    [deliveryId],
  );
  return row!.round;
}

/** Pending deliveries of a deleted endpoint end CANCELLED. */
export async function cancelPendingDeliveries(em: EntityManager, endpointId: string): Promise<void> {
  await em.execute(`update webhook_delivery set status = 'CANCELLED', finished_at = now() where endpoint_id = ? and status = 'PENDING'`, [endpointId]);
}

export interface DeliveryLogRow {
  id: string;
  event_id: string;
  endpoint_id: string;
  event_type: string;
  status: string;
  attempts: number;
  round: number;
  created_at: string;
  finished_at: string | null;
  position: string;
  attempt_log: { attempt: number; round: number; attemptedAt: string; statusCode: number | null; durationMs: number; error: string | null }[];
}

/** An endpoint's deliveries, newest first, each with every attempt; keyset after (`at`, `id`). */
export async function deliveryLog(
  em: EntityManager,
  where: { endpointId: string } | { eventId: string },
  limit: number,
  after: { at: string; id: string } | null,
): Promise<DeliveryLogRow[]> {
  const [column, value] = 'endpointId' in where ? ['d.endpoint_id', where.endpointId] : ['d.event_id', where.eventId];
  return em.execute<DeliveryLogRow[]>(
    `select d.id, d.event_id, ev.type as event_type, d.status, d.attempts, d.round, d.endpoint_id,
            to_char(d.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as created_at,
            to_char(d.finished_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as finished_at,
            to_char(d.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as position,
            coalesce((select json_agg(json_build_object('attempt', a.attempt, 'round', a.round,
                                                         'attemptedAt', to_char(a.attempted_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
                                                         'statusCode', a.status_code, 'durationMs', a.duration_ms, 'error', a.error)
                                       order by a.attempted_at)
                        from webhook_attempt a where a.delivery_id = d.id), '[]') as attempt_log
       from webhook_delivery d join event_outbox ev on ev.id = d.event_id
      where ${column} = ? ${after ? 'and (d.created_at, d.id) < (?::timestamptz, ?)' : ''}
      order by d.created_at desc, d.id desc limit ?`,
    [value, ...(after ? [after.at, after.id] : []), limit],
  );
}

/**
 * One PENDING delivery per event and endpoint subscribed when the event was created (an endpoint registered later
 * does not receive it); returns the endpoints that got new deliveries.
 */
export async function createDeliveries(em: EntityManager, eventIds: string[]): Promise<{ endpointId: string; tenantId: string; accountId: string }[]> {
  return em.execute<{ endpointId: string; tenantId: string; accountId: string }[]>(
    `with created as (
       insert into webhook_delivery (id, event_id, endpoint_id, status, next_attempt_at)
       select gen_random_uuid()::text, ev.id, e.id, 'PENDING', now()
         from event_outbox ev
         join webhook_endpoint e on e.account_id = ev.account_id and e.enabled and ev.type = any(e.events) and e.created_at <= ev.created_at
        where ev.id in (?)
       on conflict (event_id, endpoint_id) do nothing
       returning endpoint_id)
     select distinct c.endpoint_id as "endpointId", e.tenant_id as "tenantId", e.account_id as "accountId"
       from created c join webhook_endpoint e on e.id = c.endpoint_id`,
    [eventIds],
  );
}
