import { z } from './zod.ts';

/** Brazilian tax ids: CPF (people, 11 digits) and CNPJ (companies, 14 digits), each with two mod-11 check digits. */
export type HolderType = 'PERSON' | 'COMPANY';

function checkDigit(digits: number[], weights: number[]): number {
  const sum = digits.reduce((acc, d, i) => acc + d * weights[i]!, 0);
  const rest = sum % 11;
  return rest < 2 ? 0 : 11 - rest;
}

function validate(document: string, length: number, weights1: number[], weights2: number[]): boolean {
  if (document.length !== length || !/^\d+$/.test(document) || /^(\d)\1+$/.test(document)) return false;
  const digits = Array.from(document, Number);
  const first = checkDigit(digits.slice(0, length - 2), weights1);
  const second = checkDigit(digits.slice(0, length - 1), weights2);
  return digits[length - 2] === first && digits[length - 1] === second;
}

const CPF_WEIGHTS_1 = [10, 9, 8, 7, 6, 5, 4, 3, 2];
const CPF_WEIGHTS_2 = [11, 10, 9, 8, 7, 6, 5, 4, 3, 2];

export const isValidCpf = (cpf: string): boolean => validate(cpf, 11, CPF_WEIGHTS_1, CPF_WEIGHTS_2);

/** The CPF whose first nine digits are `base` (nine digits): `base` and its two check digits. */
export function cpfWithCheckDigits(base: string): string {
  const digits = Array.from(base, Number);
  const first = checkDigit(digits, CPF_WEIGHTS_1);
  return `${base}${first}${checkDigit([...digits, first], CPF_WEIGHTS_2)}`;
}

export const isValidCnpj = (cnpj: string): boolean =>
  validate(cnpj, 14, [5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2], [6, 5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2]);

export function holderTypeOf(document: string): HolderType | null {
  if (isValidCpf(document)) return 'PERSON';
  if (isValidCnpj(document)) return 'COMPANY';
  return null;
}

/**
 * A document as a Pix payer is shown the receiver's: a CPF masked as Brazilian banks mask it, only its 4th to 9th
 * digits kept (`***.456.789-**`); a CNPJ, public, whole. Anything else (already masked) stays as it is.
 */
export const documentShownToPayer = (document: string): string =>
  /^\d{11}$/.test(document) ? `***.${document.slice(3, 6)}.${document.slice(6, 9)}-**` : document;

const digitsOnly = z.string().regex(/^\d+$/, 'must contain digits only');

export const cpfSchema = digitsOnly.length(11, 'a CPF has 11 digits').refine(isValidCpf, 'invalid CPF check digits');
export const cnpjSchema = digitsOnly.length(14, 'a CNPJ has 14 digits').refine(isValidCnpj, 'invalid CNPJ check digits');
/** Either a CPF or a CNPJ, with valid check digits. */
export const documentSchema = digitsOnly
  .refine((d) => d.length === 11 || d.length === 14, 'must be a CPF (11 digits) or a CNPJ (14 digits)')
  .refine((d) => holderTypeOf(d) !== null || (d.length !== 11 && d.length !== 14), 'invalid check digits');
