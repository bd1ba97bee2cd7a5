import { validationError } from './errors.ts';
import { z } from './zod.ts';

/** Keyset pagination shared by every listing: `limit` 1–100 (default 20) and an opaque cursor of (createdAt, id). */
export const pageQuery = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(20),
  cursor: z.string().max(512).optional(),
});

/** PostgreSQL's timestamptz text, microseconds included: the cursor must not lose precision or rows repeat. */
const PG_TIMESTAMP = /^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01]) ([01]\d|2[0-3]):[0-5]\d:[0-5]\d(\.\d{1,6})?[+-]\d\d(:\d\d)?$/;
const Cursor = z.object({ createdAt: z.string().regex(PG_TIMESTAMP), id: z.string().min(1).max(64) });
export type Cursor = z.infer<typeof Cursor>;

export function encodeCursor(c: Cursor): string {
  return Buffer.from(JSON.stringify(c)).toString('base64url');
}

export function decodeCursor(raw: string): Cursor {
  try {
    const parsed = Cursor.safeParse(JSON.parse(Buffer.from(raw, 'base64url').toString('utf8')));
    if (parsed.success) return parsed.data;
  } catch {
    // falls through to the 400
  }
  throw validationError('Invalid cursor: pass the nextCursor of the previous page unchanged', [{ path: 'query.cursor', message: 'invalid cursor' }]);
}
