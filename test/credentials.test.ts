import { expect, test } from '@jest/globals';
import { hashSecret, issueCredential, parseCredential, secretMatches } from '../src/shared/credentials.ts';

const pepper = 'p'.repeat(40);

test('an issued credential parses back and its secret matches only its own hash', () => {
  const a = issueCredential('tnk', pepper);
  const b = issueCredential('tnk', pepper);
  const parsed = parseCredential('tnk', a.key)!;
  expect(parsed.prefix).toBe(a.prefix);
  expect(secretMatches(parsed.secret, a.secretHash, pepper)).toBe(true);
  expect(secretMatches(parsed.secret, b.secretHash, pepper)).toBe(false);
  expect(secretMatches(parsed.secret, a.secretHash, 'q'.repeat(40))).toBe(false);
  expect(a.secretHash).toBe(hashSecret(parsed.secret, pepper));
});

test.each(['', 'tnk_', 'pak_abcdefghijkl.' + 'a'.repeat(43), 'tnk_ABCDEFGHIJKL.' + 'a'.repeat(43), 'tnk_abcdefghijkl.' + 'a'.repeat(42), 'tnk_abcdefghijkl' + 'a'.repeat(43)])(
  'malformed tenant key %p is refused',
  (raw) => {
    expect(parseCredential('tnk', raw)).toBeNull();
  },
);
