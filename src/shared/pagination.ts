import { createHmac, timingSafeEqual } from 'node:crypto';
import { validationError } from './errors.ts';
import { z } from './zod.ts';

/**
 * Keyset pagination shared by every listing: newest first on (created_at, id), `limit` 1–100 (default 20) and an
 * opaque cursor. The cursor carries the exact position (created_at with microseconds, so rows are neither skipped
 * nor repeated) and is signed for the listing it pages: a cursor changed by the client, or taken from another
 * account's listing, is 400.
 */

/** ISO 8601 UTC text of a timestamptz column whatever the session time zone: `MS` for responses, `US` for cursors. */
export const isoUtc = (column: string, fraction: 'MS' | 'US' = 'MS') => `to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.${fraction}"Z"')`;

export const limitParam = z
  .string()
  .refine((s) => /^\d{1,3}$/.test(s) && Number(s) >= 1 && Number(s) <= 100, 'limit must be a whole number from 1 to 100')
  .transform(Number)
  .default(20)
  .openapi({ type: 'integer', minimum: 1, maximum: 100, default: 20 });

export const cursorParam = z.string().max(300).optional().openapi({ description: 'pagination.nextCursor of the previous page, unchanged' });

export const pageQuery = z.object({ limit: limitParam, cursor: cursorParam });

/** A position in a listing: the exact `created_at` (UTC, microseconds) and the id of the last row served. */
export interface Cursor {
  at: string;
  id: string;
}

const Payload = z.strictObject({ at: z.iso.datetime({ precision: 6 }), id: z.string().min(1).max(64) });
const FORMAT = /^([A-Za-z0-9_-]{1,200})\.([A-Za-z0-9_-]{43})$/;

const mac = (key: string, scope: string, body: string) => createHmac('sha256', key).update(`cursor:${scope}:${body}`).digest('base64url');

/** `<base64url JSON>.<base64url HMAC>`: opaque to clients, and only valid as issued for `scope`. */
export function encodeCursor(key: string, scope: string, cursor: Cursor): string {
  const body = Buffer.from(JSON.stringify({ at: cursor.at, id: cursor.id })).toString('base64url');
  return `${body}.${mac(key, scope, body)}`;
}

export function decodeCursor(key: string, scope: string, text: string): Cursor {
  const refused = validationError('Invalid request query', [{ path: 'query.cursor', message: 'cursor must be a nextCursor of this listing, unchanged' }]);
  const [, body, signature] = FORMAT.exec(text) ?? [];
  if (!body || !signature || !timingSafeEqual(Buffer.from(signature), Buffer.from(mac(key, scope, body)))) throw refused;
  let json: unknown;
  try {
    json = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
  } catch {
    throw refused;
  }
  const payload = Payload.safeParse(json);
  if (!payload.success) throw refused;
  return payload.data;
}

/** The pagination block of a page fetched with `limit + 1` rows. */
export function pageOf<T extends { position: string; id: string }>(rows: T[], limit: number, key: string, scope: string) {
  const items = rows.slice(0, limit);
  const last = items.at(-1);
  const nextCursor = rows.length > limit && last ? encodeCursor(key, scope, { at: last.position, id: last.id }) : null;
  return { items, pagination: { limit, nextCursor, hasMore: nextCursor !== null } };
}
