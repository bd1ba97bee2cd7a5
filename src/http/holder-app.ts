import { Router, type Express } from 'express';
import { registerApprovalRoutes } from '../approvals/routes.ts';
import { holderAuthenticator } from '../identity/authenticator.ts';
import { registerIdentityRoutes } from '../identity/routes.ts';
import { registerPixPaymentRoutes } from '../pix/payment-routes.ts';
import { registerPixLocationRoutes } from '../pix/location-routes.ts';
// Mounted when SANDBOX=1: with the api's entry point, the only production code that imports src/sandbox/ (test/sandbox-boundary.test.ts).
import { registerSandboxRoutes } from '../sandbox/routes.ts';
import type { Services } from '../services.ts';
import { registerStatementRoutes } from '../statements/routes.ts';
import { registerHolderTevRoutes } from '../transfers/holder-routes.ts';
import { createHttpApp } from './app.ts';
import { dependencyChecks } from './health.ts';
import { settlementMetrics } from './metrics.ts';
import { createRegistry } from './openapi.ts';

/** `{base_url}`: the holder-facing API (JWT bearer tokens, `X-Tenant-Id`, no version prefix). */
export function createHolderApp(services: Services): Express {
  const router = Router();
  const registry = createRegistry('holder');
  const auth = holderAuthenticator(services);
  registerIdentityRoutes(router, registry, services, auth);
  registerHolderTevRoutes(router, registry, services, auth);
  registerApprovalRoutes(router, registry, services, auth);
  registerPixPaymentRoutes(router, registry, services, auth);
  registerPixLocationRoutes(router, registry, services);
  registerStatementRoutes(router, registry, services, auth);
  if (services.config.SANDBOX) registerSandboxRoutes(router, registry, services);
  return createHttpApp({
    name: 'Holder API',
    logger: services.logger.child({ app: 'holder' }),
    bodyLimit: services.config.JSON_BODY_LIMIT,
    requestDeadlineMs: services.config.REQUEST_DEADLINE_MS,
    trustProxy: services.config.TRUST_PROXY,
    health: dependencyChecks(services),
    metrics: settlementMetrics(services),
    router,
    registry,
    document: {
      title: 'Banking platform: holder API',
      description: 'Registration, authentication, PIN, internal transfers (TEV), Pix, statements and payouts for account holders.',
      serverUrl: services.config.publicBaseUrl,
    },
  });
}
