import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { adminOk } from './support/admin.ts';
import { closeDb, sql } from './support/db.ts';
import { login, newTenant, register, tenantHeaders, type Registered } from './support/fixtures.ts';
import { http } from './support/http.ts';
import { startPlatform, type Platform } from './support/platform.ts';

let platform: Platform;
let tenantId: string;
beforeAll(async () => {
  platform = await startPlatform();
  tenantId = await newTenant(platform);
});
afterAll(async () => {
  await platform?.stop();
  await closeDb();
});

const createPin = (r: Registered, pin: unknown) => http('POST', `${platform.holderUrl}/passwords/create-pin`, { body: { pin }, headers: tenantHeaders(tenantId, r.token) });
const changePin = (r: Registered, currentPin: unknown, newPin: unknown) =>
  http('POST', `${platform.holderUrl}/passwords/change-pin`, { body: { currentPin, newPin }, headers: tenantHeaders(tenantId, r.token) });
const pinRow = async (r: Registered) => (await sql('select pin_hash, pin_failed_attempts, pin_locked_at from holder where id = $1', [r.holder.id]))[0];

describe('create-pin', () => {
  test.each([['1111'], ['0000'], ['1234'], ['4321'], ['6789'], ['12a4'], ['123'], ['12345'], [1357], ['']])('PIN %p is refused with 400', async (pin) => {
    const r = await register(platform, tenantId);
    const res = await createPin(r, pin);
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('VALIDATION_ERROR');
    expect((await pinRow(r)).pin_hash).toBeNull();
  });

  test('sets the PIN once; hasPin turns true; a second create is 409 pointing to change-pin', async () => {
    const r = await register(platform, tenantId);
    const res = await createPin(r, '2580');
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ message: 'PIN criado com sucesso.' });
    expect((await login(platform, r)).body.entity.hasPin).toBe(true);
    const again = await createPin(r, '3691');
    expect(again.status).toBe(409);
    expect(again.body.code).toBe('PIN_ALREADY_SET');
    expect(again.body.message).toContain('/passwords/change-pin');
  });

  test('two create-pin calls in parallel: exactly one wins', async () => {
    const r = await register(platform, tenantId);
    const results = await Promise.all([createPin(r, '2580'), createPin(r, '3691')]);
    expect(results.map((x) => x.status).sort()).toEqual([201, 409]);
  });

  test('without a token it is 401', async () => {
    const res = await http('POST', `${platform.holderUrl}/passwords/create-pin`, { body: { pin: '2580' }, headers: tenantHeaders(tenantId) });
    expect(res.status).toBe(401);
  });
});

describe('change-pin and lockout', () => {
  test('changes the PIN with the current one; the old one stops working', async () => {
    const r = await register(platform, tenantId);
    await createPin(r, '2580');
    const res = await changePin(r, '2580', '3691');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ message: 'PIN alterado com sucesso.' });
    expect((await changePin(r, '2580', '7410')).body.code).toBe('INVALID_PIN');
    expect((await changePin(r, '3691', '7410')).status).toBe(200);
  });

  test('change-pin before any PIN is 403 PIN_NOT_SET; a weak new PIN or the same PIN is 400', async () => {
    const r = await register(platform, tenantId);
    expect((await changePin(r, '2580', '3691')).body.code).toBe('PIN_NOT_SET');
    await createPin(r, '2580');
    expect((await changePin(r, '2580', '9999')).status).toBe(400);
    const same = await changePin(r, '2580', '2580');
    expect(same.status).toBe(400);
    expect(same.body.details).toEqual([{ path: 'body.newPin', message: 'same as the current PIN' }]);
  });

  test('three wrong PINs lock it (423) until an operator unlocks it', async () => {
    const r = await register(platform, tenantId);
    await createPin(r, '2580');
    const first = await changePin(r, '1357', '3691');
    expect(first.status).toBe(403);
    expect(first.body).toEqual({ code: 'INVALID_PIN', message: 'Incorrect PIN; 2 attempts left before it is locked' });
    expect((await changePin(r, '1357', '3691')).body.message).toContain('1 attempt left');
    const third = await changePin(r, '1357', '3691');
    expect(third.status).toBe(423);
    expect(third.body.code).toBe('PIN_LOCKED');
    const right = await changePin(r, '2580', '3691');
    expect(right.status).toBe(423);
    expect((await pinRow(r)).pin_locked_at).toBeInstanceOf(Date);

    expect(await adminOk(platform.env, 'holder:unlock-pin', '--tenant', tenantId, '--document', r.document)).toEqual({ id: r.holder.id, pinLocked: false });
    expect((await changePin(r, '2580', '3691')).status).toBe(200);
    expect(await pinRow(r)).toMatchObject({ pin_failed_attempts: 0, pin_locked_at: null });
  });

  test('a correct PIN resets the count of wrong ones', async () => {
    const r = await register(platform, tenantId);
    await createPin(r, '2580');
    await changePin(r, '1357', '3691');
    await changePin(r, '1357', '3691');
    expect((await changePin(r, '2580', '3691')).status).toBe(200);
    expect((await pinRow(r)).pin_failed_attempts).toBe(0);
  });

  test('ten wrong PINs in parallel never get more than three tries', async () => {
    const r = await register(platform, tenantId);
    await createPin(r, '2580');
    const results = await Promise.all(Array.from({ length: 10 }, (_, i) => changePin(r, String(1000 + i * 7).padStart(4, '0'), '3691')));
    const codes = results.map((x) => x.status);
    expect(codes.filter((c) => c === 403).length).toBeLessThanOrEqual(2);
    expect(codes.every((c) => [403, 423, 429].includes(c))).toBe(true);
    const row = await pinRow(r);
    expect(row.pin_failed_attempts).toBe(3);
    expect(row.pin_locked_at).toBeInstanceOf(Date);
  });
});
