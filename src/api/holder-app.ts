import { Router, type Express } from 'express';
import { registerContactRoutes } from '../contacts/routes.ts';
import { holderAuthenticator } from '../identity/authenticator.ts';
import { registerIdentityRoutes } from '../identity/routes.ts';
import { registerLimitRoutes } from '../limits/routes.ts';
import { registerPixLocationRoutes } from '../pix/location-routes.ts';
import { registerApprovalRoutes } from '../payments/approval-routes.ts';
import type { PaymentContext } from '../payments/context.ts';
import type { PlatformContext } from '../platform-context.ts';
import { registerPixPaymentRoutes } from '../payments/pix-routes.ts';
import { registerHolderTevPaymentRoutes } from '../payments/tev-routes.ts';
// Mounted when SANDBOX=1: with the api's entry point, the only production code that imports src/sandbox/ (test/sandbox-boundary.test.ts).
import { registerSandboxRoutes } from '../sandbox/routes.ts';
import { registerReceiptRoutes } from '../receipts/routes.ts';
import { registerHolderScheduleRoutes } from '../schedules/routes.ts';
import { registerStatementRoutes } from '../statements/routes.ts';
import { registerHolderTevRoutes } from '../transfers/holder-routes.ts';
import { createHttpApp } from '../http/app.ts';
import { dependencyChecks } from './health.ts';
import { settlementMetrics } from './settlement-metrics.ts';
import { createRegistry } from '../http/openapi.ts';

/** `{base_url}`: the holder-facing API (JWT bearer tokens, `X-Tenant-Id`, no version prefix). */
export function createHolderApp(platform: PlatformContext & PaymentContext): Express {
  const router = Router();
  const registry = createRegistry('holder');
  const auth = holderAuthenticator(platform);
  registerIdentityRoutes(router, registry, platform, auth);
  registerLimitRoutes(router, registry, platform, auth);
  registerHolderTevRoutes(router, registry, auth);
  registerHolderTevPaymentRoutes(router, registry, platform, auth);
  registerApprovalRoutes(router, registry, platform, auth);
  registerPixPaymentRoutes(router, registry, platform, auth);
  registerContactRoutes(router, registry, platform.config, auth);
  registerHolderScheduleRoutes(router, registry, platform, auth);
  registerPixLocationRoutes(router, registry, platform);
  registerStatementRoutes(router, registry, platform, auth);
  registerReceiptRoutes(router, registry, platform, auth);
  if (platform.config.SANDBOX) registerSandboxRoutes(router, registry, platform);
  return createHttpApp({
    name: 'Holder API',
    logger: platform.logger.child({ app: 'holder' }),
    bodyLimit: platform.config.JSON_BODY_LIMIT,
    requestDeadlineMs: platform.config.REQUEST_DEADLINE_MS,
    trustProxy: platform.config.TRUST_PROXY,
    health: dependencyChecks(platform),
    metrics: settlementMetrics(platform),
    router,
    registry,
    document: {
      title: 'Banking platform: holder API',
      description: 'Registration, authentication, PIN, internal transfers (TEV), Pix, statements and payouts for account holders.',
      serverUrl: platform.config.publicBaseUrl,
    },
  });
}
