import { z } from '../shared/zod.ts';
import { command, presentFlag, repeated } from '../cli/command.ts';
import { readFileSync } from 'node:fs';
import { createApiKey, createTenant, createTenantKey, revokeApiKey, revokeTenantKey, setBrand } from './service.ts';

export const tenantCommands = {
  'tenant:create': command({
    summary: 'Create a tenant',
    usage: '--name N [--pin-exempt]',
    flags: z.object({ name: z.string().trim().min(1).max(200), 'pin-exempt': presentFlag }),
    async run({ em }, f) {
      const tenant = await createTenant(em, { name: f.name, pinExempt: f['pin-exempt'] });
      return { tenantId: tenant.id };
    },
  }),
  'tenant:set-brand': command({
    summary: "Set the name and logo (PNG or JPEG file) the tenant's receipts carry",
    usage: '--tenant T --name N [--logo path.png]',
    flags: z.object({ tenant: z.uuid(), name: z.string().trim().min(1).max(200), logo: z.string().min(1).optional() }),
    run: ({ em }, f) => setBrand(em, f.tenant, f.name, f.logo === undefined ? null : readFileSync(f.logo)),
  }),
  'tenant-key:create': command({
    summary: 'Issue a tenant API key (X-Tenant-Api-Key); shown once',
    usage: '--tenant T',
    flags: z.object({ tenant: z.uuid() }),
    run: ({ em, config }, f) => createTenantKey(em, config.KEY_PEPPER, f.tenant),
  }),
  'tenant-key:revoke': command({
    summary: 'Revoke a tenant API key and every client token it issued',
    usage: '--tenant T --id K',
    flags: z.object({ tenant: z.uuid(), id: z.string().min(1) }),
    run: ({ em }, f) => revokeTenantKey(em, f.tenant, f.id),
  }),
  'api-key:create': command({
    summary: 'Issue an integration API key scoped to Pix accounts; shown once',
    usage: '--tenant T --pix-account P [--pix-account P2 ...]',
    flags: z.object({ tenant: z.uuid(), 'pix-account': repeated.pipe(z.array(z.string()).min(1, 'give at least one --pix-account')) }),
    run: ({ em, config }, f) => createApiKey(em, config.KEY_PEPPER, f.tenant, f['pix-account']),
  }),
  'api-key:revoke': command({
    summary: 'Revoke an integration API key',
    usage: '--id K',
    flags: z.object({ id: z.string().min(1) }),
    run: ({ em }, f) => revokeApiKey(em, f.id),
  }),
};
