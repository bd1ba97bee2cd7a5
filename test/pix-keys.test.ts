import { describe, expect, test } from '@jest/globals';
import { issuesToDetails } from '../src/http/route.ts';
import { validatePixKey, withPixKey, type PixKeyType } from '../src/pix/keys.ts';
import { z } from '../src/shared/zod.ts';

describe('validatePixKey', () => {
  test.each<[PixKeyType, string, string]>([
    ['CPF', '52998224725', '52998224725'],
    ['CNPJ', '11222333000181', '11222333000181'],
    ['EMAIL', ' Maria.Silva+pix@Example.COM ', 'maria.silva+pix@example.com'],
    ['EMAIL', `${'a'.repeat(65)}@example.com`, `${'a'.repeat(65)}@example.com`],
    ['PHONE', '+5511987654321', '+5511987654321'],
    ['PHONE', '+556132345678', '+556132345678'],
    ['PHONE', '+14155552671', '+14155552671'],
    ['PHONE', '+351912345678', '+351912345678'],
    ['EVP', '123E4567-E89B-12D3-A456-426614174000', '123e4567-e89b-12d3-a456-426614174000'],
  ])('%s %p is valid and normalizes to %p', (type, key, normalized) => {
    expect(validatePixKey(type, key)).toEqual({ ok: true, key: normalized });
  });

  test.each<[PixKeyType, string, RegExp]>([
    ['CPF', '52998224724', /CPF check digits do not match/],
    ['CPF', '11111111111', /CPF check digits do not match/],
    ['CPF', '529.982.247-25', /a CPF key has exactly 11 digits, without punctuation/],
    ['CPF', '5299822472', /a CPF key has exactly 11 digits/],
    ['CPF', '11222333000181', /a CPF key has exactly 11 digits/],
    ['CNPJ', '1122233300018A', /a CNPJ key has exactly 14 digits/],
    ['CNPJ', 'AB222333000181', /a CNPJ key has exactly 14 digits/],
    ['CNPJ', '11222333000182', /CNPJ check digits do not match/],
    ['EMAIL', 'maria.example.com', /an e-mail key must contain "@"/],
    ['EMAIL', `${'a'.repeat(66)}@example.com`, /an e-mail key has at most 77 characters/],
    ['EMAIL', 'maria@localhost', /not a valid e-mail address/],
    ['EMAIL', 'maria silva@example.com', /not a valid e-mail address/],
    ['EMAIL', 'maria@@example.com', /not a valid e-mail address/],
    ['EMAIL', '.maria@example.com', /not a valid e-mail address/],
    ['EMAIL', 'maria..silva@example.com', /not a valid e-mail address/],
    ['EMAIL', 'maria@-example.com', /not a valid e-mail address/],
    ['PHONE', '5511987654321', /a phone key is in E.164 format/],
    ['PHONE', '(11) 98765-4321', /a phone key is in E.164 format/],
    ['PHONE', '+55 11 98765-4321', /only digits after "\+"/],
    ['PHONE', '+1234567890123456', /at most 15 digits/],
    ['PHONE', '+0123456789', /does not start with 0/],
    ['PHONE', '+55119876543210', /a Brazilian phone key is \+55, a 2-digit area code/],
    ['PHONE', '+5501987654321', /a Brazilian phone key/],
    ['PHONE', '+5511887654321', /a Brazilian phone key/],
    ['PHONE', '+55119876543', /a Brazilian phone key/],
    ['EVP', '123e4567e89b12d3a456426614174000', /an EVP key is a UUID/],
    ['EVP', '123e4567-e89b-12d3-a456-42661417400z', /an EVP key is a UUID/],
    ['EVP', 'not-a-uuid', /an EVP key is a UUID/],
    ['EVP', '   ', /the Pix key is empty/],
  ])('%s %p is refused', (type, key, reason) => {
    const check = validatePixKey(type, key);
    expect(check.ok).toBe(false);
    if (!check.ok) expect(check.reason).toMatch(reason);
  });
});

describe('withPixKey', () => {
  const schema = withPixKey({ accountId: z.uuid(), amount: z.number() });
  const base = { accountId: '0b6f3a5e-2f1d-4c3b-9a8e-7d6c5b4a3f2e', amount: 10 };

  test('passes the other fields through and returns the canonical key', () => {
    const parsed = schema.parse({ ...base, pixKey: 'EVP@Example.com', pixKeyType: 'EMAIL' });
    // Typed access: the output keeps the caller's fields next to pixKey and pixKeyType.
    const { accountId, amount, pixKey, pixKeyType }: { accountId: string; amount: number; pixKey: string; pixKeyType: PixKeyType } = parsed;
    expect({ accountId, amount, pixKey, pixKeyType }).toEqual({ ...base, pixKey: 'evp@example.com', pixKeyType: 'EMAIL' });
  });

  test('an invalid key is reported at body.pixKey with the reason', () => {
    const result = schema.safeParse({ ...base, pixKey: '52998224724', pixKeyType: 'CPF' });
    expect(result.success).toBe(false);
    expect(issuesToDetails('body', result.error!)).toEqual([{ path: 'body.pixKey', message: 'invalid CPF Pix key: CPF check digits do not match' }]);
  });

  test('an unknown key type is reported at body.pixKeyType', () => {
    const result = schema.safeParse({ ...base, pixKey: 'x', pixKeyType: 'RANDOM' });
    expect(issuesToDetails('body', result.error!).map((d) => d.path)).toEqual(['body.pixKeyType']);
  });
});
