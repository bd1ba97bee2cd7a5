import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import type { Router } from 'express';
import type { PlatformContext } from '../platform-context.ts';
import { registerChargePayerRoutes } from './charge-payer-routes.ts';
import { registerIncomingPixRoutes } from './incoming-pix-routes.ts';
import { registerKycProviderPageRoutes } from './kyc-provider-page.ts';

/**
 * The holder API's sandbox routes (SANDBOX=1 only): stand-ins for the outside world, each calling the use case the real
 * one would reach: the KYC provider's page, a payer's incoming Pix, a charge's payer.
 */
export function registerSandboxRoutes(router: Router, registry: OpenAPIRegistry, platform: PlatformContext): void {
  registerKycProviderPageRoutes(router, registry, platform);
  registerIncomingPixRoutes(router, registry, platform);
  registerChargePayerRoutes(router, registry, platform);
}
