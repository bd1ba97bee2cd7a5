import type { EntityManager } from '@mikro-orm/postgresql';
import type { Client } from '@temporalio/client';
import type { Pool } from 'undici';
import type { Config } from '../config.ts';
import { dispatchHandOff } from '../handoff/dispatch.ts';
import { insertHandOff } from '../handoff/store.ts';
import type { Orm } from '../persistence/orm.ts';
import { DomainError, notFound, refusals } from '../shared/errors.ts';
import { decodeCursor, pageOf } from '../shared/pagination.ts';
import { newCuid } from '../shared/ids.ts';
import { hit } from '../shared/rate-limit.ts';
import { webhookEndpointWake, type BatchOutcome } from '../../workflows/contracts/webhook-endpoint.ts';
import {
  claimDueDeliveries,
  deliveryLog,
  endpointTarget,
  lockDelivery,
  lockEndpointShared,
  msUntilNextDue,
  recordAttempts,
  reopenDelivery,
  unlockEndpointShared,
  type AttemptRecord,
  type ClaimedDelivery,
} from './delivery-store.ts';
import { findEndpointOfAccount, type WebhookEndpoint } from './endpoint-store.ts';
import { receiverPool, send } from './sender.ts';
import { openToken } from './token-box.ts';

/** Due deliveries one batch takes. */
export const BATCH_SIZE = 200;
/** Requests one endpoint has in flight at most: all that an endpoint that fails or hangs can hold. */
export const PARALLEL_SENDS_PER_ENDPOINT = 16;

/** Keep-alive connections per endpoint, reused across batches of this worker. */
const pools = new Map<string, Pool>();
const poolFor = (config: Config, endpointId: string, url: string) => {
  let pool = pools.get(endpointId);
  if (!pool) pools.set(endpointId, (pool = receiverPool(config, url, PARALLEL_SENDS_PER_ENDPOINT)));
  return pool;
};

/**
 * What becomes of a delivery after a failed attempt: the documented backoff, from `WEBHOOK_RETRY_INITIAL_MS` doubling
 * to `WEBHOOK_RETRY_MAX_MS`, while the next attempt still falls within `WEBHOOK_RETRY_WINDOW_MS` of the first.
 */
export function afterFailure(config: Pick<Config, 'WEBHOOK_RETRY_INITIAL_MS' | 'WEBHOOK_RETRY_MAX_MS' | 'WEBHOOK_RETRY_WINDOW_MS'>, attempts: number, firstAttemptAt: Date, now: Date) {
  const delay = Math.min(config.WEBHOOK_RETRY_INITIAL_MS * 2 ** Math.max(attempts - 1, 0), config.WEBHOOK_RETRY_MAX_MS);
  if (now.getTime() - firstAttemptAt.getTime() + delay > config.WEBHOOK_RETRY_WINDOW_MS) return { status: 'FAILED' as const, nextAttemptAt: null };
  return { status: 'PENDING' as const, nextAttemptAt: new Date(now.getTime() + delay) };
}

/** Runs `fn` on every item with at most `limit` in flight. */
async function eachLimited<T>(items: T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) await fn(items[next++]!);
  }));
}

/**
 * One batch of an endpoint's due deliveries: claims them, sends them concurrently (bounded, keep-alive), records every
 * attempt and gives each failure its next attempt time. While it sends it holds the endpoint's shared lock, so a
 * deletion waits for it and no batch starts sending after the deletion committed.
 */
export async function deliverDueBatch({ orm, config }: { orm: Orm; config: Config }, endpointId: string): Promise<BatchOutcome> {
  const pool = await orm.em.getConnection().getNativeClient();
  const db = await pool.connect();
  await lockEndpointShared(db, endpointId);
  try {
    const target = await endpointTarget(db, endpointId);
    if (!target?.enabled) return { endpointEnabled: false, attempted: 0, moreDue: false, nextDueInMs: null };
    const claimed = await claimDueDeliveries(db, endpointId, BATCH_SIZE, config.WEBHOOK_TIMEOUT_MS + 20_000);
    const authToken = openToken(target.auth_token_ciphertext, config.KEY_PEPPER);
    const receiver = poolFor(config, endpointId, target.url);
    const records: AttemptRecord[] = [];
    await eachLimited(claimed, PARALLEL_SENDS_PER_ENDPOINT, async (d: ClaimedDelivery) => {
      const attemptedAt = new Date();
      const result = await send(config, { url: target.url, authToken, pool: receiver }, { id: d.event_id, type: d.type, data: d.data });
      const attempt = d.attempts + 1;
      const next = result.error ? afterFailure(config, attempt, new Date(d.first_attempt_at), new Date()) : { status: 'DELIVERED' as const, nextAttemptAt: null };
      records.push({ deliveryId: d.id, attemptId: newCuid(), attempt, round: d.round, attemptedAt, ...result, ...next });
    });
    await recordAttempts(db, records);
    const nextDueInMs = await msUntilNextDue(db, endpointId);
    return { endpointEnabled: true, attempted: claimed.length, moreDue: claimed.length === BATCH_SIZE || nextDueInMs === 0, nextDueInMs };
  } finally {
    await unlockEndpointShared(db, endpointId).catch(() => undefined);
    db.release();
  }
}

/**
 * Delivers one event to one endpoint again: a new round of attempts with the same `webhook-id`, by the endpoint's
 * workflow, woken through the hand-off. While a round of it is still PENDING, that round is the answer and no other
 * starts: repeating the call is harmless. A missing endpoint is 404; a deleted one is 409.
 */
export async function redeliver(em: EntityManager, client: Client, config: Pick<Config, 'TEMPORAL_TASK_QUEUE'>, endpoint: WebhookEndpoint | null, eventId: string) {
  if (!endpoint) throw notFound('Webhook endpoint');
  if (!endpoint.enabled) throw new DomainError('WEBHOOK_DISABLED');
  const wake = webhookEndpointWake({ endpointId: endpoint.id, tenantId: endpoint.tenantId, accountId: endpoint.accountId });
  const { delivery, round, handOff } = await em.transactional(async (tx) => {
    const current = await lockDelivery(tx, endpoint.id, eventId);
    if (!current) throw notFound('Delivery');
    if (current.status === 'PENDING') return { delivery: current, round: current.round, handOff: null };
    return { delivery: current, round: await reopenDelivery(tx, current.id), handOff: await insertHandOff(tx, config.TEMPORAL_TASK_QUEUE, wake) };
  });
  if (handOff) await dispatchHandOff(client, em, handOff);
  return { deliveryId: delivery.id, eventId, round, status: 'PENDING' as const, workflowId: wake.workflowId };
}
redeliver.raises = refusals('NOT_FOUND', 'WEBHOOK_DISABLED');

/**
 * An integrator's redelivery (`POST …/deliveries/:eventId/redeliver`): the account's endpoint, the calls limited per
 * API key and endpoint (`WEBHOOK_REDELIVER_MAX_PER_MINUTE`; an unknown endpoint is 404 and counts none), then `redeliver`.
 */
export async function redeliverForApiKey(
  em: EntityManager,
  client: Client,
  config: Pick<Config, 'TEMPORAL_TASK_QUEUE' | 'WEBHOOK_REDELIVER_MAX_PER_MINUTE'>,
  caller: { apiKeyId: string; accountId: string },
  webhookId: string,
  eventId: string,
) {
  const endpoint = await findEndpointOfAccount(em, caller.accountId, webhookId);
  if (endpoint) await hit(em, { name: 'webhook-redeliver', limit: config.WEBHOOK_REDELIVER_MAX_PER_MINUTE, windowSeconds: 60 }, `${caller.apiKeyId}:${endpoint.id}`);
  return redeliver(em, client, config, endpoint, eventId);
}
redeliverForApiKey.raises = refusals(hit, redeliver);

/** One page of an endpoint's delivery log, newest first, each delivery with every attempt; another account's is 404. */
export async function deliveryLogPage(em: EntityManager, cursorKey: string, account: { id: string }, webhookId: string, page: { limit: number; cursor?: string | undefined }) {
  const endpoint = await findEndpointOfAccount(em, account.id, webhookId);
  if (!endpoint) throw notFound('Webhook endpoint');
  const scope = `deliveries:${endpoint.id}`;
  const after = page.cursor === undefined ? null : decodeCursor(cursorKey, scope, page.cursor);
  const rows = await deliveryLog(em, { endpointId: endpoint.id }, page.limit + 1, after);
  const { items, pagination } = pageOf(rows, page.limit, cursorKey, scope);
  const deliveries = items.map((d) => ({
    eventId: d.event_id,
    eventType: d.event_type,
    status: d.status,
    round: d.round,
    createdAt: d.created_at,
    finishedAt: d.finished_at,
    attempts: d.attempt_log,
  }));
  return { deliveries, pagination };
}
deliveryLogPage.raises = refusals('NOT_FOUND');
