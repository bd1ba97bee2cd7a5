import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * A receipt's authentication code: a keyed MAC (HMAC-SHA256) over the fields the receipt certifies and its tenant,
 * cut to 80 bits and written in Crockford's base32 as four groups of four (`7K2M-9QXD-4HB8-T3VW`): short enough to
 * type, and far too many to guess. The key is derived from KEY_PEPPER, which is unique per install, so another
 * install (or anyone without the pepper) cannot make a code that verifies here.
 */
const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
const CODE_BYTES = 10;

export const receiptKey = (pepper: string): Buffer => createHmac('sha256', pepper).update('receipt-authentication-code:v1').digest();

/** JSON with every object's keys sorted: the same fields give the same bytes, whatever order they were stored in. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    return `{${Object.keys(value)
      .sort()
      .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value);
}

function base32(bytes: Buffer): string {
  let bits = 0;
  let value = 0;
  let out = '';
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += ALPHABET[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  return out;
}

/** The code of `fields` for `tenantId`, grouped for reading (`XXXX-XXXX-XXXX-XXXX`). */
export function authenticationCode(key: Buffer, tenantId: string, fields: object): string {
  const mac = createHmac('sha256', key).update(`${tenantId}\n${canonicalJson(fields)}`).digest().subarray(0, CODE_BYTES);
  return base32(mac).match(/.{4}/g)!.join('-');
}

/**
 * A code as typed back: case, spaces and dashes do not matter, and the letters Crockford's base32 leaves out read as
 * the digits they look like (O as 0, I and L as 1). Null when it cannot be a code.
 */
export function normalizeCode(typed: string): string | null {
  const compact = typed.toUpperCase().replace(/[\s-]/g, '').replace(/O/g, '0').replace(/[IL]/g, '1');
  if (compact.length !== 16 || [...compact].some((c) => !ALPHABET.includes(c))) return null;
  return compact.match(/.{4}/g)!.join('-');
}

/** Whether `code` is the code of these fields, compared in constant time. */
export function codeMatches(key: Buffer, tenantId: string, fields: object, code: string): boolean {
  const expected = Buffer.from(authenticationCode(key, tenantId, fields));
  const given = Buffer.from(code);
  return expected.length === given.length && timingSafeEqual(expected, given);
}
