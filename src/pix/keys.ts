import { isValidCnpj, isValidCpf } from '../shared/documents.ts';
import { z } from '../shared/zod.ts';

/**
 * Pix keys (DICT "chaves"): the five types and their canonical forms. The canonical form is what DICT stores and what
 * a payment must carry, so validation also normalizes (e-mail and EVP lowercased, surrounding blanks dropped).
 */
export const PIX_KEY_TYPES = ['CPF', 'CNPJ', 'EMAIL', 'PHONE', 'EVP'] as const;
export type PixKeyType = (typeof PIX_KEY_TYPES)[number];

export type PixKeyCheck = { ok: true; key: string } | { ok: false; reason: string };

/** DICT caps e-mail keys at 77 characters (what fits next to the GUI in the BR Code's field 26). */
export const MAX_EMAIL_KEY_LENGTH = 77;

// The HTML living standard's pragmatic address grammar, lowercase only (keys are compared lowercased), and the domain
// must have at least one dot: a DICT e-mail key is a deliverable internet address, never `user@localhost`.
const EMAIL = /^[a-z0-9.!#$%&'*+/=?^_`{|}~-]+@[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)+$/;
const E164 = /^\+[1-9]\d{1,14}$/;
// Brazil: +55, a two-digit area code (DDD, no zeros), then 8 digits (landline) or 9 digits starting with 9 (mobile).
const BRAZILIAN_PHONE = /^\+55[1-9]{2}(?:9\d{8}|\d{8})$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

const invalid = (reason: string): PixKeyCheck => ({ ok: false, reason });

function checkDocument(key: string, digits: number, name: string, isValid: (d: string) => boolean): PixKeyCheck {
  // DICT stores CPF/CNPJ keys as bare digits; a mask ("123.456.789-09") is a different string, so it is refused.
  if (!new RegExp(`^\\d{${digits}}$`).test(key)) return invalid(`a ${name} key has exactly ${digits} digits, without punctuation`);
  if (!isValid(key)) return invalid(`${name} check digits do not match`);
  return { ok: true, key };
}

function checkEmail(raw: string): PixKeyCheck {
  const key = raw.toLowerCase();
  if (!key.includes('@')) return invalid('an e-mail key must contain "@"');
  if (key.length > MAX_EMAIL_KEY_LENGTH) return invalid(`an e-mail key has at most ${MAX_EMAIL_KEY_LENGTH} characters`);
  const local = key.slice(0, key.lastIndexOf('@'));
  if (!EMAIL.test(key) || local.startsWith('.') || local.endsWith('.') || local.includes('..')) {
    return invalid('not a valid e-mail address, e.g. maria@example.com');
  }
  return { ok: true, key };
}

function checkPhone(key: string): PixKeyCheck {
  if (!key.startsWith('+')) return invalid('a phone key is in E.164 format: "+", country code and number, e.g. +5511987654321');
  if (!/^\+\d+$/.test(key)) return invalid('a phone key has only digits after "+", without spaces or punctuation');
  if (!E164.test(key)) return invalid('an E.164 number has at most 15 digits and its country code does not start with 0');
  if (key.startsWith('+55') && !BRAZILIAN_PHONE.test(key)) {
    return invalid('a Brazilian phone key is +55, a 2-digit area code and an 8-digit number or a 9-digit mobile number starting with 9');
  }
  return { ok: true, key };
}

function checkEvp(raw: string): PixKeyCheck {
  const key = raw.toLowerCase();
  if (!UUID.test(key)) return invalid('an EVP key is a UUID, e.g. 123e4567-e89b-12d3-a456-426614174000');
  return { ok: true, key };
}

/** Validates `key` as a key of `type`; returns the canonical key, or the reason it cannot be one. */
export function validatePixKey(type: PixKeyType, key: string): PixKeyCheck {
  const trimmed = key.trim();
  if (trimmed === '') return invalid('the Pix key is empty');
  switch (type) {
    case 'CPF':
      return checkDocument(trimmed, 11, 'CPF', isValidCpf);
    case 'CNPJ':
      return checkDocument(trimmed, 14, 'CNPJ', isValidCnpj);
    case 'EMAIL':
      return checkEmail(trimmed);
    case 'PHONE':
      return checkPhone(trimmed);
    case 'EVP':
      return checkEvp(trimmed);
  }
}

/**
 * A key found without its type (a static BR Code's field 26-01, a charge payload's `chave`): the first type it is
 * valid as, in canonical form; null when it is none.
 */
export function identifyPixKey(raw: string): { pixKey: string; pixKeyType: PixKeyType } | null {
  for (const pixKeyType of PIX_KEY_TYPES) {
    const check = validatePixKey(pixKeyType, raw);
    if (check.ok) return { pixKey: check.key, pixKeyType };
  }
  return null;
}

export const pixKeyTypeSchema = z.enum(PIX_KEY_TYPES).openapi({ description: 'Pix key type' });

const pixKeyShape = {
  pixKey: z.string().max(100).openapi({ description: 'Pix key, in the format of its type', example: '+5511987654321' }),
  pixKeyType: pixKeyTypeSchema,
};

interface PixKeyFields {
  pixKey: string;
  pixKeyType: PixKeyType;
}

function canonicalKey<T extends PixKeyFields>(body: T, ctx: z.RefinementCtx): T {
  const check = validatePixKey(body.pixKeyType, body.pixKey);
  if (check.ok) return { ...body, pixKey: check.key };
  ctx.addIssue({ code: 'custom', path: ['pixKey'], message: `invalid ${body.pixKeyType} Pix key: ${check.reason}` });
  return z.NEVER;
}

/**
 * A request body with `pixKey` and `pixKeyType` plus the given fields. The key is validated against its type (errors
 * reported at `pixKey`, so `body.pixKey` in the response) and comes out in canonical form.
 */
export function withPixKey<S extends z.ZodRawShape>(shape: S) {
  // The cast only restates what the spread guarantees; TypeScript cannot see through zod's mapped types on a generic S.
  return z.object({ ...shape, ...pixKeyShape }).transform((body, ctx) => canonicalKey(body as typeof body & PixKeyFields, ctx));
}
