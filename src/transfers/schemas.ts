import { z } from '../shared/zod.ts';

export const description = z.string().max(140, 'at most 140 characters');

export const TevCreated = z
  .object({
    kind: z.enum(['done', 'rejected', 'submitted_unknown']),
    tevId: z.string(),
    status: z.enum(['DONE', 'FAILED', 'SUBMITTED_UNKNOWN']),
    amountCents: z.string().optional(),
    feeCents: z.string().optional(),
    reason: z.string().optional(),
    providerStatusCode: z.number().optional(),
  })
  .openapi('TevCreated');

export const TevRead = z
  .object({
    id: z.string(),
    status: z.enum(['DONE', 'FAILED', 'SUBMITTED_UNKNOWN']),
    direction: z.enum(['out', 'in']),
    amountCents: z.string(),
    feeCents: z.string(),
    description: z.string().nullable(),
    externalRef: z.string().nullable(),
    destination: z.object({ branch: z.string(), account: z.string() }).optional(),
    origin: z.object({ branch: z.string(), account: z.string() }).optional(),
    createdAt: z.string(),
    resolvedAt: z.string().nullable(),
  })
  .openapi('Tev');
