import type { EntityManager } from '@mikro-orm/postgresql';
import type { Client } from '@temporalio/client';
import type { Account } from '../accounts/entities.ts';
import type { Config } from '../config.ts';
import type { EventType } from '../events/catalog.ts';
import { DomainError, notFound, refusals } from '../shared/errors.ts';
import { newCuid } from '../shared/ids.ts';
import { assertSameRequest, requestHash } from '../shared/idempotency.ts';
import { decodeCursor, pageOf } from '../shared/pagination.ts';
import { isoSaoPaulo } from '../shared/time.ts';
import { resolvesToPublic } from '../shared/address-guard.ts';
import { sealToken } from './token-box.ts';
import { dispatchHandOff } from '../handoff/dispatch.ts';
import { insertHandOff } from '../handoff/store.ts';
import { webhookEndpointWake } from '../../workflows/contracts/webhook-endpoint.ts';
import { cancelPendingDeliveries, waitForBatchesInFlight } from './delivery-store.ts';
import { findEndpointByKey, insertEndpoint, listEndpointsOfAccount, markEndpointDisabled, type WebhookEndpoint } from './endpoint-store.ts';

/** Section 2.7, without authToken (only the creation response carries it). */
export function endpointView(e: WebhookEndpoint) {
  return {
    id: e.id,
    pixAccountId: e.pixAccountId,
    url: e.url,
    events: e.events,
    coreEndpointId: e.coreEndpointId,
    enabled: e.enabled,
    createdAt: isoSaoPaulo(e.createdAt),
  };
}

export interface EndpointRegistration {
  url: string;
  events: EventType[];
  authToken: string;
}

/**
 * Registers an endpoint for a Pix account. The Idempotency-Key makes a retry return the original record; the same
 * key with another body is 409. Outside the sandbox, a URL whose host resolves to a private address is refused.
 */
export async function registerEndpoint(em: EntityManager, config: Config, account: Account, idempotencyKey: string, registration: EndpointRegistration) {
  const hash = requestHash([registration.url, registration.events, registration.authToken]);
  const existing = await findEndpointByKey(em, account.id, idempotencyKey);
  if (existing) {
    assertSameRequest(existing.requestHash, hash);
    return { ...endpointView(existing), authToken: registration.authToken, signingSecret: signingSecret(registration.authToken) };
  }
  if (!config.SANDBOX && !(await resolvesToPublic(new URL(registration.url)))) {
    throw new DomainError('WEBHOOK_URL_NOT_ALLOWED', undefined, [{ path: 'body.url', message: 'resolves to a non-public address' }]);
  }
  const row = await insertEndpoint(em, {
    id: newCuid(),
    tenantId: account.tenantId,
    accountId: account.id,
    pixAccountId: account.pixAccountId,
    url: registration.url,
    events: registration.events,
    authTokenCiphertext: sealToken(registration.authToken, config.KEY_PEPPER),
    idempotencyKey,
    requestHash: hash,
  });
  // A concurrent request with the same key won the insert: answer as its retry.
  if (!row) return registerEndpoint(em, config, account, idempotencyKey, registration);
  return { ...endpointView(row), authToken: registration.authToken, signingSecret: signingSecret(registration.authToken) };
}
registerEndpoint.raises = refusals('WEBHOOK_URL_NOT_ALLOWED', assertSameRequest);

/**
 * The Standard Webhooks form of the key the signature already uses: `whsec_` and the base64 of the authToken's UTF-8
 * bytes. Libraries such as the official `standardwebhooks` package take this (they base64-decode their secret).
 */
export const signingSecret = (authToken: string) => `whsec_${Buffer.from(authToken, 'utf8').toString('base64')}`;

export async function listEndpoints(em: EntityManager, cursorKey: string, account: Account, limit: number, cursor: string | undefined) {
  const scope = `webhooks:${account.id}`;
  const after = cursor === undefined ? null : decodeCursor(cursorKey, scope, cursor);
  const rows = await listEndpointsOfAccount(em, account.id, after, limit + 1);
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
    if (!(await markEndpointDisabled(tx, account.id, endpointId))) throw notFound('Webhook endpoint');
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
disableEndpoint.raises = refusals('NOT_FOUND');
