import { z } from '../shared/zod.ts';

/** Headers every `{base_url}` endpoint validates first (400 when missing or not a UUID). */
export const tenantHeaders = z.object({
  'x-tenant-id': z.uuid({ error: 'X-Tenant-Id must be the tenant UUID' }).openapi({ description: 'Tenant UUID' }),
});

export const accountIdParams = z.object({ accountId: z.uuid({ error: 'accountId must be a UUID' }) });
