import { freeText, z } from '../shared/zod.ts';

/** A payment's description, on both statements: TEV (both hosts) and Pix. */
export const description = freeText().max(140, 'at most 140 characters');

/** The integrator's own reference of a TEV, unique per source account. */
export const externalRef = freeText().min(1).max(128, 'at most 128 characters');

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
