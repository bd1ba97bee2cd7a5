/** The `webhook_endpoint` table's SQL (the delivery hot path reads its target in delivery-store.ts). */
import type { EntityManager } from '@mikro-orm/postgresql';
import type { EventType } from '../events/catalog.ts';
import { isoUtc } from '../shared/pagination.ts';

export interface WebhookEndpoint {
  id: string;
  tenantId: string;
  accountId: string;
  pixAccountId: string;
  url: string;
  events: EventType[];
  coreEndpointId: string | null;
  enabled: boolean;
  requestHash: string;
  createdAt: Date;
  /** `created_at` with microseconds: the listing cursor. */
  position: string;
}

interface WebhookEndpointRow {
  id: string;
  tenant_id: string;
  account_id: string;
  pix_account_id: string;
  url: string;
  events: EventType[];
  core_endpoint_id: string | null;
  enabled: boolean;
  request_hash: string;
  created_at: string;
  position: string;
}

const toEndpoint = (r: WebhookEndpointRow): WebhookEndpoint => ({
  id: r.id,
  tenantId: r.tenant_id,
  accountId: r.account_id,
  pixAccountId: r.pix_account_id,
  url: r.url,
  events: r.events,
  coreEndpointId: r.core_endpoint_id,
  enabled: r.enabled,
  requestHash: r.request_hash,
  createdAt: new Date(r.created_at),
  position: r.position,
});

const COLUMNS = `id, tenant_id, account_id, pix_account_id, url, events, core_endpoint_id, enabled, request_hash, created_at,
  ${isoUtc('created_at', 'US')} as position`;

const one = async (em: EntityManager, where: string, params: unknown[]) => {
  const [row] = await em.execute<WebhookEndpointRow[]>(`select ${COLUMNS} from webhook_endpoint where ${where}`, params);
  return row ? toEndpoint(row) : null;
};

export const findEndpoint = (em: EntityManager, id: string) => one(em, 'id = ?', [id]);

export const findEndpointOfAccount = (em: EntityManager, accountId: string, id: string) => one(em, 'id = ? and account_id = ?', [id, accountId]);

export const findEndpointByKey = (em: EntityManager, accountId: string, idempotencyKey: string) =>
  one(em, 'account_id = ? and idempotency_key = ?', [accountId, idempotencyKey]);

export type NewWebhookEndpoint = Pick<WebhookEndpoint, 'id' | 'tenantId' | 'accountId' | 'pixAccountId' | 'url' | 'events' | 'requestHash'> & {
  authTokenCiphertext: string;
  idempotencyKey: string;
};

/** Records the endpoint; null when the account already has one under this idempotency key. */
export async function insertEndpoint(em: EntityManager, e: NewWebhookEndpoint): Promise<WebhookEndpoint | null> {
  const [row] = await em.execute<WebhookEndpointRow[]>(
    `insert into webhook_endpoint (id, tenant_id, account_id, pix_account_id, url, events, auth_token_ciphertext, idempotency_key, request_hash)
     values (?, ?, ?, ?, ?, ?::text[], ?, ?, ?)
     on conflict (account_id, idempotency_key) do nothing
     returning ${COLUMNS}`,
    [e.id, e.tenantId, e.accountId, e.pixAccountId, e.url, `{${e.events.join(',')}}`, e.authTokenCiphertext, e.idempotencyKey, e.requestHash],
  );
  return row ? toEndpoint(row) : null;
}

/** The account's endpoints, newest first, after `after` when given; `limit` rows at most. */
export async function listEndpointsOfAccount(em: EntityManager, accountId: string, after: { at: string; id: string } | null, limit: number): Promise<WebhookEndpoint[]> {
  const rows = await em.execute<WebhookEndpointRow[]>(
    `select ${COLUMNS} from webhook_endpoint
      where account_id = ? ${after ? 'and (created_at, id) < (?::timestamptz, ?)' : ''}
      order by created_at desc, id desc limit ?`,
    [accountId, ...(after ? [after.at, after.id] : []), limit],
  );
  return rows.map(toEndpoint);
}

/** Soft delete; false when the account has no such endpoint. */
export async function markEndpointDisabled(em: EntityManager, accountId: string, id: string): Promise<boolean> {
  const rows = await em.execute<{ id: string }[]>(
    `update webhook_endpoint set enabled = false, disabled_at = coalesce(disabled_at, now()) where id = ? and account_id = ? returning id`,
    [id, accountId],
  );
  return rows.length > 0;
}
