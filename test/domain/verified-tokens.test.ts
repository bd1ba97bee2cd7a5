/**
 * Holder tokens are verified once per process and remembered (`verifyHolderToken`): a remembered token still expires
 * on time, and is not taken under another secret.
 */
import { randomUUID } from 'node:crypto';
import { afterEach, expect, jest, test } from '@jest/globals';
import { loadConfig } from '../../src/config.ts';
import { issueHolderToken, verifyHolderToken } from '../../src/identity/tokens.ts';

const config = (secret: string) => ({ ...loadConfig({ ...process.env, JWT_SECRET: secret }), JWT_TTL_SECONDS: 60 });
const holder = () => ({ id: randomUUID(), tenantId: randomUUID(), type: 'PERSON' as const });
const code = (fn: () => unknown) => {
  try {
    fn();
  } catch (err) {
    return (err as { details?: unknown; message: string }).message;
  }
  return 'accepted';
};

afterEach(() => {
  jest.restoreAllMocks();
});

test('a remembered token answers its claims until it expires, then TOKEN_EXPIRED', () => {
  const c = config('s'.repeat(40));
  const h = holder();
  const token = issueHolderToken(c, h);
  expect(verifyHolderToken(c, token)).toMatchObject({ sub: h.id, tid: h.tenantId, type: 'PERSON' });
  expect(verifyHolderToken(c, token)).toMatchObject({ sub: h.id });
  const now = Date.now();
  jest.spyOn(Date, 'now').mockReturnValue(now + 61_000);
  expect(code(() => verifyHolderToken(c, token))).toBe('Token expired; authenticate again');
});

test('a token remembered under one secret is verified again under another, and refused', () => {
  const first = config('a'.repeat(40));
  const token = issueHolderToken(first, holder());
  expect(code(() => verifyHolderToken(first, token))).toBe('accepted');
  expect(code(() => verifyHolderToken(config('b'.repeat(40)), token))).toBe('Invalid token; authenticate again');
});
