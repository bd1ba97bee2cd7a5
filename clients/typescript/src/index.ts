import createClient from 'openapi-fetch';
import type { components as HolderComponents, paths as HolderPaths } from './generated/holder.ts';
import type { components as IntegrationComponents, paths as IntegrationPaths, webhooks as IntegrationWebhooks } from './generated/integration.ts';

export type { HolderPaths, IntegrationPaths };

/** The schemas of the holder API (`{base_url}`): `HolderSchemas['AuthenticationResult']`, `HolderSchemas['Statement']`, … */
export type HolderSchemas = HolderComponents['schemas'];
/** The schemas of the integration API (`{api_url}`): `IntegrationSchemas['Tev']`, `IntegrationSchemas['WebhookCreated']`, … */
export type IntegrationSchemas = IntegrationComponents['schemas'];

/** Any event a webhook endpoint receives: `{ event, data }`, discriminated by `event`. */
export type WebhookEvent = {
  [E in keyof IntegrationWebhooks]: IntegrationWebhooks[E]['post'] extends { requestBody: { content: { 'application/json': infer Body } } } ? Body : never;
}[keyof IntegrationWebhooks];

export interface HolderClientOptions {
  /** `{base_url}`, e.g. http://127.0.0.1:3000 */
  baseUrl: string;
  /** The tenant UUID, sent as X-Tenant-Id on every request. */
  tenantId: string;
  /** A holder token; set it later with `setToken` once registration or authentication gives one. */
  token?: string;
  fetch?: typeof fetch;
}

/** A typed client of the holder API. X-Tenant-Id and the bearer token are sent on every request. */
export function createHolderClient(options: HolderClientOptions) {
  let token = options.token;
  const client = createClient<HolderPaths>({
    baseUrl: options.baseUrl,
    headers: { 'X-Tenant-Id': options.tenantId },
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
  client.use({
    onRequest({ request }) {
      if (token) request.headers.set('Authorization', `Bearer ${token}`);
      return request;
    },
  });
  return Object.assign(client, {
    setToken(value: string) {
      token = value;
    },
  });
}

export interface IntegrationClientOptions {
  /** `{api_url}`, e.g. http://127.0.0.1:3001 */
  baseUrl: string;
  /** The integration API key, pak_<prefix>.<secret>. */
  apiKey: string;
  fetch?: typeof fetch;
}

/** A typed client of the integration API (`/v1`), authenticated with the API key. */
export function createIntegrationClient(options: IntegrationClientOptions) {
  return createClient<IntegrationPaths>({
    baseUrl: options.baseUrl,
    headers: { Authorization: `Bearer ${options.apiKey}` },
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
}
