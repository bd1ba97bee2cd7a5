/** The sandbox directory's made-up owners: a valid CPF for every key that is not a document, the same at every ask. */
import { randomUUID } from 'node:crypto';
import { expect, test } from '@jest/globals';
import { dictEntry } from '../src/sandbox/psp/network.ts';
import { cpfWithCheckDigits, isValidCpf } from '../src/shared/documents.ts';

test('a CPF is completed with its check digits; nine equal digits make none', () => {
  expect(cpfWithCheckDigits('123456789')).toBe('12345678909');
  expect(isValidCpf(cpfWithCheckDigits('529982247'))).toBe(true);
  expect(isValidCpf(cpfWithCheckDigits('111111111'))).toBe(false);
});

test('every EVP, e-mail and phone key has an owner with a valid CPF, stable for the key', () => {
  const keys = [
    ...Array.from({ length: 500 }, () => ['EVP', randomUUID()] as const),
    ['EMAIL', 'joao@example.com'] as const,
    ['PHONE', '+5511912345678'] as const,
  ];
  for (const [type, key] of keys) {
    const entry = dictEntry(type, key)!;
    expect(isValidCpf(entry.owner.taxIdNumber)).toBe(true);
    expect(dictEntry(type, key)).toEqual(entry);
  }
  expect(dictEntry('CPF', '12345678909')!.owner.taxIdNumber).toBe('12345678909');
});
