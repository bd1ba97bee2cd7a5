import { looksLikeCuid } from '../shared/ids.ts';
import { z } from '../shared/zod.ts';

/** A position in a statement: the exact `created_at` (UTC, microseconds) and the id of the last movement served. */
export interface StatementCursor {
  at: string;
  id: string;
}

const Payload = z.strictObject({
  at: z.iso.datetime({ precision: 6 }),
  id: z.string().refine(looksLikeCuid),
});

export const encodeCursor = (cursor: StatementCursor): string => Buffer.from(JSON.stringify({ at: cursor.at, id: cursor.id })).toString('base64url');

function decode(text: string): StatementCursor | null {
  let json: unknown;
  try {
    json = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    return null;
  }
  const payload = Payload.safeParse(json);
  // Node decodes base64url leniently; only the exact text this endpoint issued is accepted.
  return payload.success && encodeCursor(payload.data) === text ? payload.data : null;
}

/**
 * The `cursor` query parameter. Opaque but not signed: a well-formed cursor can only name a position inside the
 * caller's own account, which the query is restricted to anyway.
 */
export const cursorParam = z
  .string()
  .max(256)
  .transform((text, ctx) => {
    const cursor = decode(text);
    if (!cursor) {
      ctx.addIssue({ code: 'custom', message: 'cursor must be a nextCursor returned by this endpoint, unchanged' });
      return z.NEVER;
    }
    return cursor;
  })
  .openapi({ type: 'string', description: 'pagination.nextCursor of the previous page' });
