import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import jwt from 'jsonwebtoken';
import { admin, adminOk } from './support/admin.ts';
import { closeDb, sql } from './support/db.ts';
import { login, newCpf, newTenant, onboarded, PASSWORD, register, tenantHeaders, type Onboarded } from './support/fixtures.ts';
import { http } from './support/http.ts';
import { startPlatform, TEST_JWT_SECRET, type Platform } from './support/platform.ts';

let platform: Platform;
let tenantId: string;
let alice: Onboarded;
let bob: Onboarded;
beforeAll(async () => {
  platform = await startPlatform({ AUTH_MAX_FAILURES_PER_ADDRESS: '15', CLIENT_AUTH_MAX_PER_MINUTE: '5' });
  tenantId = await newTenant(platform);
  [alice, bob] = await Promise.all([onboarded(platform, tenantId), onboarded(platform, tenantId, 'COMPANY')]);
}, 90_000);
afterAll(async () => {
  await platform?.stop();
  await closeDb();
});

const goal = (accountId: string, token: string, tenant = tenantId, extra: Record<string, string> = {}) =>
  http('PUT', `${platform.holderUrl}/accounts/${accountId}/monthly-goal`, { body: { monthlyGoal: 150.25 }, headers: { ...tenantHeaders(tenant, token), ...extra } });
const clientAuth = (tenant: string, key: string | undefined, body: unknown, extra: Record<string, string> = {}) =>
  http('POST', `${platform.holderUrl}/authenticate/clients`, { body, headers: { ...tenantHeaders(tenant), ...(key ? { 'x-tenant-api-key': key } : {}), ...extra } });

describe('POST /authenticate', () => {
  test('answers the token (1 hour), the holder and its accounts', async () => {
    const res = await login(platform, alice);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ token: expect.any(String), entityType: 'PERSON', entity: expect.objectContaining({ id: alice.holder.id, status: 'ACTIVE', hasPin: true, onboardingStep: 'DONE', onboardingLink: null }), accounts: [expect.objectContaining({ id: alice.account.id, status: 'APPROVED', balance: 0 })] });
    const claims = jwt.decode(res.body.token) as jwt.JwtPayload;
    expect(claims).toMatchObject({ type: 'PERSON', sub: alice.holder.id, tid: tenantId });
    expect(claims.exp! - claims.iat!).toBe(3600);
    expect((await login(platform, bob)).body.entityType).toBe('COMPANY');
  });

  test('wrong password and unknown document give the same 401 after the same work', async () => {
    const wrong = await login(platform, { ...alice, password: 'not-the-password-1' });
    const unknown = await login(platform, { ...alice, document: newCpf() });
    expect(wrong.status).toBe(401);
    expect(unknown.status).toBe(401);
    expect(wrong.body).toEqual({ code: 'INVALID_CREDENTIALS', message: 'Document or password is incorrect' });
    expect(unknown.body).toEqual(wrong.body);
    // An address of its own, so these failures leave the default address's budget to the tests below.
    const address = { 'x-forwarded-for': `198.51.100.${Math.floor(Math.random() * 250) + 1}` };
    const time = async (document: string) => {
      const t = process.hrtime.bigint();
      const res = await http('POST', `${platform.holderUrl}/authenticate`, { body: { document, password: 'not-the-password-1' }, headers: { ...tenantHeaders(tenantId), ...address } });
      expect(res.status).toBe(401);
      return Number(process.hrtime.bigint() - t) / 1e6;
    };
    // Both paths run one argon2 verification: neither is an order of magnitude faster. The fastest of three, taken in
    // turns, so one pause of a busy machine does not decide.
    const known: number[] = [];
    const missing: number[] = [];
    for (let i = 0; i < 3; i++) {
      known.push(await time(bob.document));
      missing.push(await time(newCpf()));
    }
    expect(Math.min(...missing)).toBeGreaterThan(Math.min(...known) / 3);
  });

  test('the tenant isolates passwords: one document, two tenants, two passwords', async () => {
    const other = await newTenant(platform);
    const twin = await register(platform, other, 'PERSON', { document: alice.document, password: 'another-secret-7' });
    expect((await login(platform, { tenantId: other, document: alice.document, password: 'another-secret-7' })).status).toBe(200);
    expect((await login(platform, { tenantId: other, document: alice.document, password: PASSWORD })).status).toBe(401);
    expect((await login(platform, { tenantId, document: alice.document, password: 'another-secret-7' })).status).toBe(401);
    expect(twin.holder.id).not.toBe(alice.holder.id);
  });

  test.each([
    ['document with letters', { document: 'abc', password: 'x' }],
    ['document of 12 digits', { document: '123456789012', password: 'x' }],
    ['missing password', { document: '12345678901' }],
    ['password as a number', { document: '12345678901', password: 12345678 }],
  ])('%s: 400', async (_c, body) => {
    const res = await http('POST', `${platform.holderUrl}/authenticate`, { body, headers: tenantHeaders(tenantId) });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('VALIDATION_ERROR');
  });

  test('repeated failures are limited per document (429), even with the right password afterwards', async () => {
    const victim = await register(platform, tenantId);
    const from = (i: number) => ({ 'x-forwarded-for': `192.0.2.${i + 1}` });
    const attempt = (password: string, i: number) =>
      http('POST', `${platform.holderUrl}/authenticate`, { body: { document: victim.document, password }, headers: { ...tenantHeaders(tenantId), ...from(i) } });
    const codes = [];
    for (let i = 0; i < 6; i++) codes.push((await attempt(`wrong-${i}-password`, i)).status);
    expect(codes).toEqual([401, 401, 401, 401, 401, 429]);
    const right = await attempt(PASSWORD, 7);
    expect(right.status).toBe(429);
    expect(right.body.code).toBe('RATE_LIMITED');
  });

  test('repeated failures are limited per client address (429)', async () => {
    const address = { 'x-forwarded-for': `203.0.113.${Math.floor(Math.random() * 250) + 1}` };
    const codes = [];
    for (let i = 0; i < 16; i++) {
      const res = await http('POST', `${platform.holderUrl}/authenticate`, { body: { document: newCpf(), password: 'whatever-1' }, headers: { ...tenantHeaders(tenantId), ...address } });
      codes.push(res.status);
    }
    expect(codes.slice(0, 15).every((c) => c === 401)).toBe(true);
    expect(codes[15]).toBe(429);
    const fromElsewhere = await login(platform, alice);
    expect(fromElsewhere.status).toBe(200);
  });
});

describe('JWT on holder endpoints', () => {
  const now = () => Math.floor(Date.now() / 1000);
  const sign = (claims: object, secret = TEST_JWT_SECRET) =>
    jwt.sign({ sub: alice.holder.id, tid: tenantId, type: 'PERSON', iat: now(), exp: now() + 600, ...claims }, secret, { algorithm: 'HS256' });

  test('a valid token reaches its own account', async () => {
    const res = await goal(alice.account.id, alice.token);
    expect(res.status).toBe(200);
    expect(res.body.account).toMatchObject({ id: alice.account.id, monthlyGoal: 150.25, monthlySpending: 0, savingsProgress: 100 });
  });

  test.each([
    ['missing Authorization', () => ({ authorization: '' })],
    ['not a Bearer token', () => ({ authorization: `Basic ${Buffer.from('a:b').toString('base64')}` })],
    ['tampered payload', () => {
      const [h, , s] = alice.token.split('.');
      const forged = Buffer.from(JSON.stringify({ ...(jwt.decode(alice.token) as object), sub: bob.holder.id })).toString('base64url');
      return { authorization: `Bearer ${h}.${forged}.${s}` };
    }],
    ['signed with another secret', () => ({ authorization: `Bearer ${sign({}, 'x'.repeat(40))}` })],
    ['alg none', () => ({ authorization: `Bearer ${jwt.sign({ sub: alice.holder.id, tid: tenantId, type: 'PERSON' }, '', { algorithm: 'none' })}` })],
    ['expired', () => ({ authorization: `Bearer ${sign({ iat: now() - 3700, exp: now() - 100 })}` })],
    ['another tenant in X-Tenant-Id', () => ({ 'x-tenant-id': randomUUID() })],
    ['a holder that does not exist', () => ({ authorization: `Bearer ${sign({ sub: randomUUID() })}` })],
  ])('%s: 401 and nothing changes', async (_c, headers) => {
    await sql('update account set monthly_goal_cents = 777 where id = $1', [alice.account.id]);
    const res = await http('PUT', `${platform.holderUrl}/accounts/${alice.account.id}/monthly-goal`, {
      body: { monthlyGoal: 1 },
      headers: Object.fromEntries(Object.entries({ ...tenantHeaders(tenantId, alice.token), ...headers() }).filter(([, v]) => v !== '')),
    });
    expect(res.status).toBe(401);
    expect(res.body.code).toBe('UNAUTHORIZED');
    const [row] = await sql('select monthly_goal_cents from account where id = $1', [alice.account.id]);
    expect(row.monthly_goal_cents).toBe('777');
  });

  test('X-Tenant-Id missing or malformed is 400 before the token is read', async () => {
    const res = await goal(alice.account.id, alice.token, 'not-a-uuid');
    expect(res.status).toBe(400);
  });

  test("another holder's account is 404, in the same tenant and across tenants", async () => {
    expect((await goal(bob.account.id, alice.token)).status).toBe(404);
    expect((await goal(randomUUID(), alice.token)).status).toBe(404);
    const otherTenant = await newTenant(platform);
    const stranger = await onboarded(platform, otherTenant);
    const cross = await goal(stranger.account.id, alice.token);
    expect(cross.status).toBe(404);
    expect(JSON.stringify(cross.body)).not.toContain(stranger.account.id);
  });

  test.each([[-1], ['1.234'], ['abc'], [null]])('monthly goal %p is 400', async (value) => {
    const res = await http('PUT', `${platform.holderUrl}/accounts/${alice.account.id}/monthly-goal`, { body: { monthlyGoal: value }, headers: tenantHeaders(tenantId, alice.token) });
    expect(res.status).toBe(400);
  });
});

describe('POST /authenticate/clients', () => {
  test('a tenant key buys a 24-hour token restricted to that holder; revoking the key ends it at once', async () => {
    const key = await adminOk(platform.env, 'tenant-key:create', '--tenant', tenantId);
    const res = await clientAuth(tenantId, key.key, { document: alice.document });
    expect(res.status).toBe(200);
    expect(res.body.entity.id).toBe(alice.holder.id);
    const claims = jwt.decode(res.body.token) as jwt.JwtPayload;
    expect(claims.exp! - claims.iat!).toBe(86400);
    expect((await goal(alice.account.id, res.body.token)).status).toBe(200);
    expect((await goal(bob.account.id, res.body.token)).status).toBe(404);

    await adminOk(platform.env, 'tenant-key:revoke', '--tenant', tenantId, '--id', key.id);
    const after = await goal(alice.account.id, res.body.token);
    expect(after.status).toBe(401);
    expect((await clientAuth(tenantId, key.key, { document: alice.document })).status).toBe(401);
  });

  test.each([
    ['missing key', 401, () => undefined],
    ['malformed key', 401, () => 'tnk_short'],
    ['unknown key', 401, () => `tnk_abcdefghijkl.${'A'.repeat(43)}`],
  ])('%s: %i', async (_c, status, key) => {
    const res = await clientAuth(tenantId, key(), { document: alice.document });
    expect(res.status).toBe(status);
    expect(res.body.code).toBe('UNAUTHORIZED');
  });

  test("another tenant's key is 401", async () => {
    const other = await newTenant(platform);
    const key = await adminOk(platform.env, 'tenant-key:create', '--tenant', other);
    const res = await clientAuth(tenantId, key.key, { document: alice.document });
    expect(res.status).toBe(401);
  });

  test.each([
    ['X-Tenant-Id missing', { 'x-tenant-id': '' }, { document: '12345678901' }],
    ['X-Tenant-Id invalid', { 'x-tenant-id': 'abc' }, { document: '12345678901' }],
    ['document of 10 digits', {}, { document: '1234567890' }],
    ['document of 15 digits', {}, { document: '123456789012345' }],
    ['a password in the body', {}, { document: '12345678901', password: 'x' }],
  ])('%s: 400', async (_c, headers, body) => {
    const key = await adminOk(platform.env, 'tenant-key:create', '--tenant', tenantId);
    const h = Object.fromEntries(Object.entries({ ...tenantHeaders(tenantId), 'x-tenant-api-key': key.key, ...headers }).filter(([, v]) => v !== ''));
    const res = await http('POST', `${platform.holderUrl}/authenticate/clients`, { body, headers: h });
    expect(res.status).toBe(400);
  });

  test('a document that is not a holder of the tenant is 401; a blocked holder is 401 with the support message', async () => {
    const key = await adminOk(platform.env, 'tenant-key:create', '--tenant', tenantId);
    expect((await clientAuth(tenantId, key.key, { document: newCpf() })).status).toBe(401);
    const carol = await onboarded(platform, tenantId);
    expect(await adminOk(platform.env, 'holder:block', '--tenant', tenantId, '--document', carol.document)).toEqual({ id: carol.holder.id, status: 'BLOCKED' });
    const blocked = await clientAuth(tenantId, key.key, { document: carol.document });
    expect(blocked.status).toBe(401);
    expect(blocked.body).toEqual({ code: 'HOLDER_BLOCKED', message: 'Conta bloqueada. Procure o suporte.' });
    expect((await login(platform, carol)).body.message).toBe('Conta bloqueada. Procure o suporte.');
    expect((await goal(carol.account.id, carol.token)).status).toBe(401);
    expect(await adminOk(platform.env, 'holder:unblock', '--tenant', tenantId, '--document', carol.document)).toEqual({ id: carol.holder.id, status: 'ACTIVE' });
    expect((await goal(carol.account.id, carol.token)).status).toBe(200);
  });

  test('calls per key are rate limited (429)', async () => {
    const key = await adminOk(platform.env, 'tenant-key:create', '--tenant', tenantId);
    const codes = [];
    for (let i = 0; i < 6; i++) codes.push((await clientAuth(tenantId, key.key, { document: alice.document })).status);
    expect(codes).toEqual([200, 200, 200, 200, 200, 429]);
  });
});

describe('operator commands for holders', () => {
  test('account:show lists the accounts with balances in cents', async () => {
    const out = await adminOk(platform.env, 'account:show', '--tenant', tenantId, '--document', alice.document);
    expect(out).toEqual({
      accounts: [{ id: alice.account.id, pixAccountId: expect.any(String), coreAccountId: expect.any(String), agency: alice.account.agency, number: alice.account.number, balanceCents: '0', status: 'APPROVED' }],
    });
  });

  test('api-key:create takes the Pix accounts of the tenant', async () => {
    const { accounts } = await adminOk(platform.env, 'account:show', '--tenant', tenantId, '--document', alice.document);
    const created = await adminOk(platform.env, 'api-key:create', '--tenant', tenantId, '--pix-account', accounts[0].pixAccountId);
    expect(created.key).toMatch(/^pak_/);
    const other = await newTenant(platform);
    const foreign = await admin(platform.env, 'api-key:create', '--tenant', other, '--pix-account', accounts[0].pixAccountId);
    expect(foreign.err.code).toBe('NOT_FOUND');
  });

  test('unknown documents are NOT_FOUND', async () => {
    const r = await admin(platform.env, 'holder:block', '--tenant', tenantId, '--document', newCpf());
    expect(r.exitCode).not.toBe(0);
    expect(r.err.code).toBe('NOT_FOUND');
  });
});
