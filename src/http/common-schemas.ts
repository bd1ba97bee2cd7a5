import { z } from '../shared/zod.ts';

/** Headers every `{base_url}` endpoint validates first (400 when missing or not a UUID). */
export const tenantHeaders = z.object({
  'x-tenant-id': z.uuid({ error: 'X-Tenant-Id must be the tenant UUID' }).openapi({ description: 'Tenant UUID' }),
});

export const accountIdParams = z.object({ accountId: z.uuid({ error: 'accountId must be a UUID' }) });

/*
 * Building blocks of the response schemas. Responses are documented, not parsed, so these only describe what the
 * platform writes; the test suites check every response they receive against them. The formats of single values live
 * in shared/formats.ts, where the event catalog takes them too.
 */
export { accountNumber, branch, cents, cuid, documentNumber, offsetDateTime, paymentDate, pixEndToEndId, signedCents, tevEndToEndId, utcDateTime, uuid } from '../shared/formats.ts';

/** The block every listing ends with: keyset pagination, newest first. */
export const Pagination = z
  .object({
    limit: z.number().int().min(1).max(100).openapi({ description: 'The effective page size', example: 20 }),
    nextCursor: z.string().nullable().openapi({ description: 'Send it as `cursor` for the next page; null on the last page', example: null }),
    hasMore: z.boolean().openapi({ description: 'nextCursor is not null', example: false }),
  })
  .openapi('Pagination');

/** A page of a listing: `{ <items>: [...], pagination }`, one shape for every listing. */
export function paginated<K extends string, T extends z.ZodType>(items: K, item: T) {
  return z.object({ [items]: z.array(item), pagination: Pagination } as { [P in K]: z.ZodArray<T> } & { pagination: typeof Pagination });
}
