import { extendZodWithOpenApi } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';

// Schemas carry their OpenAPI metadata (`.openapi(...)`) wherever they are defined, so every module takes `z` from here.
extendZodWithOpenApi(z);

export { z };

/** C0 controls other than tab, line feed and carriage return, and DEL: nothing a person writes; PostgreSQL refuses NUL. */
const CONTROL_CHARACTER = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F]/;

export const STORABLE_TEXT_RULE = 'must not contain NUL or other control characters, nor unpaired UTF-16 surrogates';

/**
 * Text every store and receiver of the platform can take: well-formed UTF-16 (a lone surrogate has no UTF-8 form, so
 * PostgreSQL, JSON receivers and webhook signatures would each see something else) and no control character.
 */
export function isStorableText(text: string): boolean {
  return text.isWellFormed() && !CONTROL_CHARACTER.test(text);
}

/** Every free-text field a client writes (names, descriptions, references, tags): refused with 400 naming the field. */
export const freeText = () => z.string().refine(isStorableText, STORABLE_TEXT_RULE);
