import type { EntityManager } from '@mikro-orm/postgresql';
import type { Client } from '@temporalio/client';
import type { Account } from '../accounts/entities.ts';
import type { Config } from '../config.ts';
import type { EventType } from '../events/outbox.ts';
import { AppError, notFound } from '../shared/errors.ts';
import { newCuid } from '../shared/ids.ts';
import { assertSameRequest, requestHash } from '../shared/idempotency.ts';
import { decodeCursor, isoUtc, pageOf } from '../shared/pagination.ts';
import { isoSaoPaulo } from '../shared/time.ts';
import { resolvesToPublic } from '../shared/address-guard.ts';
import { sealToken } from './token-box.ts';
import { dispatchHandOff } from '../handoff/dispatch.ts';
import { insertHandOff } from '../handoff/store.ts';
import { webhookEndpointWake } from '../../workflows/contracts/webhook-endpoint.ts';
import { cancelPendingDeliveries, waitForBatchesInFlight } from './delivery-store.ts';

interface EndpointRow {
  id: string;
  pix_account_id: string;
  url: string;
  events: EventType[];
  core_endpoint_id: string | null;
  enabled: boolean;
  request_hash: string;
  created_at: string;
}

/** Section 2.7, without authToken (only the creation response carries it). */
export function endpointView(row: EndpointRow) {
  return {
    id: row.id,
    pixAccountId: row.pix_account_id,
    url: row.url,
    events: row.events,
    coreEndpointId: row.core_endpoint_id,
    enabled: row.enabled,
    createdAt: isoSaoPaulo(new Date(row.created_at)),
  };
}

export interface Registration {
  url: string;
  events: EventType[];
  authToken: string;
}

/**
 * Registers an endpoint for a Pix account. The Idempotency-Key makes a retry return the original record; the same
 * key with another body is 409. Outside the sandbox, a URL whose host resolves to a private address is refused.
 */
export async function registerEndpoint(em: EntityManager, config: Config, account: Account, idempotencyKey: string, r: Registration) {
  const hash = requestHash([r.url, r.events, r.authToken]);
  const existing = await em.execute<EndpointRow[]>('select * from webhook_endpoint where account_id = ? and idempotency_key = ?', [account.id, idempotencyKey]);
  if (existing[0]) {
    assertSameRequest(existing[0].request_hash, hash);
    return { ...endpointView(existing[0]), authToken: r.authToken, signingSecret: signingSecret(r.authToken) };
  }
  if (!config.SANDBOX && !(await resolvesToPublic(new URL(r.url)))) {
    throw new AppError(400, 'WEBHOOK_URL_NOT_ALLOWED', 'The URL must resolve to public addresses only (no loopback, private, link-local or metadata hosts)', [
      { path: 'body.url', message: 'resolves to a non-public address' },
    ]);
  }
  const [row] = await em.execute<EndpointRow[]>(
    `insert into webhook_endpoint (id, tenant_id, account_id, pix_account_id, url, events, auth_token_ciphertext, idempotency_key, request_hash)
     values (?, ?, ?, ?, ?, ?::text[], ?, ?, ?)
     on conflict (account_id, idempotency_key) do nothing
     returning *`,
    [newCuid(), account.tenantId, account.id, account.pixAccountId, r.url, `{${r.events.join(',')}}`, sealToken(r.authToken, config.KEY_PEPPER), idempotencyKey, hash],
  );
  // A concurrent request with the same key won the insert: answer as its retry.
  if (!row) return registerEndpoint(em, config, account, idempotencyKey, r);
  return { ...endpointView(row), authToken: r.authToken, signingSecret: signingSecret(r.authToken) };
}

/**
 * The Standard Webhooks form of the key the signature already uses: `whsec_` and the base64 of the authToken's UTF-8
 * bytes. Libraries such as the official `standardwebhooks` package take this (they base64-decode their secret).
 */
export const signingSecret = (authToken: string) => `whsec_${Buffer.from(authToken, 'utf8').toString('base64')}`;

export async function listEndpoints(em: EntityManager, cursorKey: string, account: Account, limit: number, cursor: string | undefined) {
  const scope = `webhooks:${account.id}`;
  const after = cursor === undefined ? null : decodeCursor(cursorKey, scope, cursor);
  const rows = await em.execute<(EndpointRow & { position: string })[]>(
    `select *, ${isoUtc('created_at', 'US')} as position from webhook_endpoint
      where account_id = ? ${after ? 'and (created_at, id) < (?::timestamptz, ?)' : ''}
      order by created_at desc, id desc limit ?`,
    [account.id, ...(after ? [after.at, after.id] : []), limit + 1],
  );
  const { items, pagination } = pageOf(rows, limit, cursorKey, scope);
  return { webhooks: items.map(endpointView), pagination };
}

/**
 * Soft delete: the record stays listed as disabled and pending deliveries are cancelled. Answers only once no batch
 * of the endpoint is sending (each holds the endpoint's shared lock while it does, and checks `enabled` after taking
 * it): nothing is sent after this returns, retries included. The endpoint's workflow is woken to end.
 */
export async function disableEndpoint(em: EntityManager, client: Client, config: Config, account: Account, endpointId: string): Promise<{ id: string; enabled: false }> {
  const handOff = await em.transactional(async (tx) => {
    const [row] = await tx.execute<{ id: string }[]>(
      `update webhook_endpoint set enabled = false, disabled_at = coalesce(disabled_at, now()) where id = ? and account_id = ? returning id`,
      [endpointId, account.id],
    );
    if (!row) throw notFound('Webhook endpoint');
    await cancelPendingDeliveries(tx, endpointId);
    return insertHandOff(tx, config.TEMPORAL_TASK_QUEUE, webhookEndpointWake({ endpointId, tenantId: account.tenantId, accountId: account.id }));
  });
  const pool = await em.getConnection().getNativeClient();
  const db = await pool.connect();
  try {
    await waitForBatchesInFlight(db, endpointId);
  } finally {
    db.release();
  }
  await dispatchHandOff(client, em, handOff);
  return { id: endpointId, enabled: false };
}
