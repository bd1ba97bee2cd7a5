import { Router, type Express } from 'express';
import { registerFeeRoutes } from '../fees/routes.ts';
import { registerPixChargeRoutes } from '../pix/charge-routes.ts';
import { registerPixProviderNotificationRoutes } from '../pix/provider-notification-routes.ts';
import type { Services } from '../services.ts';
import { apiKeyAuthenticator } from '../tenants/api-key-auth.ts';
import { registerIntegrationTevRoutes } from '../transfers/integration-routes.ts';
import { registerWebhookDeliveryRoutes } from '../webhooks/delivery-routes.ts';
import { documentWebhookEvents } from '../webhooks/event-docs.ts';
import { registerWebhookRoutes } from '../webhooks/routes.ts';
import { createHttpApp } from './app.ts';
import { dependencyChecks } from './health.ts';
import { settlementMetrics } from './metrics.ts';
import { createRegistry } from './openapi.ts';

/** `{api_url}`: the integration API (`/v1`, API-key bearer credential scoped to Pix accounts). */
export function createIntegrationApp(services: Services): Express {
  const router = Router();
  const registry = createRegistry('apiKey');
  const auth = apiKeyAuthenticator(services);
  registerIntegrationTevRoutes(router, registry, services, auth);
  registerFeeRoutes(router, registry, auth);
  registerWebhookRoutes(router, registry, services, auth);
  registerWebhookDeliveryRoutes(router, registry, services, auth);
  registerPixChargeRoutes(router, registry, services, auth);
  registerPixProviderNotificationRoutes(router, registry, services);
  documentWebhookEvents(registry);
  return createHttpApp({
    name: 'Integration API',
    logger: services.logger.child({ app: 'integration' }),
    bodyLimit: services.config.JSON_BODY_LIMIT,
    requestDeadlineMs: services.config.REQUEST_DEADLINE_MS,
    trustProxy: services.config.TRUST_PROXY,
    health: dependencyChecks(services),
    metrics: settlementMetrics(services),
    router,
    registry,
    document: {
      title: 'Banking platform: integration API',
      description: 'Single-step internal transfers, transfer queries, fees and webhook endpoints for integrators.',
      serverUrl: services.config.publicApiUrl,
    },
  });
}
