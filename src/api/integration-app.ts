import { Router, type Express } from 'express';
import { registerBatchRoutes } from '../batches/routes.ts';
import { registerFeeRoutes } from '../fees/routes.ts';
import { registerPixChargeRoutes } from '../pix/charge-routes.ts';
import { registerPixProviderNotificationRoutes } from '../pix/provider-notification-routes.ts';
import type { PaymentContext } from '../payments/context.ts';
import type { PlatformContext } from '../platform-context.ts';
import { registerIntegrationTevPaymentRoutes } from '../payments/tev-routes.ts';
import { registerIntegrationScheduleRoutes } from '../schedules/routes.ts';
import { apiKeyAuthenticator } from '../tenants/api-key-auth.ts';
import { registerIntegrationTevRoutes } from '../transfers/integration-routes.ts';
import { registerWebhookDeliveryRoutes } from '../webhooks/delivery-routes.ts';
import { documentWebhookEvents } from '../webhooks/event-docs.ts';
import { registerWebhookRoutes } from '../webhooks/routes.ts';
import { createHttpApp } from '../http/app.ts';
import { dependencyChecks } from './health.ts';
import { settlementMetrics } from './settlement-metrics.ts';
import { createRegistry } from '../http/openapi.ts';

/** `{api_url}`: the integration API (`/v1`, API-key bearer credential scoped to Pix accounts). */
export function createIntegrationApp(platform: PlatformContext & PaymentContext): Express {
  const router = Router();
  const registry = createRegistry('apiKey');
  const auth = apiKeyAuthenticator(platform);
  registerIntegrationTevPaymentRoutes(router, registry, platform, auth);
  registerIntegrationTevRoutes(router, registry, auth);
  registerFeeRoutes(router, registry, auth);
  registerWebhookRoutes(router, registry, platform, auth);
  registerWebhookDeliveryRoutes(router, registry, platform, auth);
  registerPixChargeRoutes(router, registry, platform, auth);
  registerIntegrationScheduleRoutes(router, registry, platform, auth);
  registerBatchRoutes(router, registry, platform, auth);
  registerPixProviderNotificationRoutes(router, registry, platform);
  documentWebhookEvents(registry);
  return createHttpApp({
    name: 'Integration API',
    logger: platform.logger.child({ app: 'integration' }),
    bodyLimit: platform.config.JSON_BODY_LIMIT,
    largeBodies: [{ method: 'POST', path: /^\/v1\/pix-accounts\/[^/]+\/batches$/, limit: platform.config.BATCH_JSON_BODY_LIMIT }],
    requestDeadlineMs: platform.config.REQUEST_DEADLINE_MS,
    trustProxy: platform.config.TRUST_PROXY,
    health: dependencyChecks(platform),
    metrics: settlementMetrics(platform),
    router,
    registry,
    document: {
      title: 'Banking platform: integration API',
      description: 'Single-step internal transfers, batch payouts, transfer queries, fees, Pix charges, scheduled payments and webhook endpoints for integrators.',
      serverUrl: platform.config.publicApiUrl,
    },
  });
}
