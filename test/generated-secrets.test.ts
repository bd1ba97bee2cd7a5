/**
 * Issue 22, finding 6: a platform started the default way, without JWT_SECRET and KEY_PEPPER (as `npm start` is), used
 * the development values written in the source, so anyone who read the repository could sign a token for any holder.
 * It now signs and keys with the secrets generated for this machine in ./data, which all its processes share.
 */
import { readFileSync, statSync } from 'node:fs';
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import jwt from 'jsonwebtoken';
import { adminOk } from './support/admin.ts';
import { closeDb } from './support/db.ts';
import { newTenant, register, tenantHeaders, type Registered } from './support/fixtures.ts';
import { http } from './support/http.ts';
import { startPlatform, type Platform } from './support/platform.ts';

/** What the source used to sign with when JWT_SECRET was unset. */
const FORMER_DEVELOPMENT_JWT_SECRET = 'development-only-jwt-secret-change-me-0000';

let platform: Platform;
let tenantId: string;
let holder: Registered;
beforeAll(async () => {
  // Empty counts as unset: the api, the worker and the operator CLI (tenant:create) all start without the secrets.
  platform = await startPlatform({ JWT_SECRET: '', KEY_PEPPER: '' });
  tenantId = await newTenant(platform);
  holder = await register(platform, tenantId);
}, 90_000);
afterAll(async () => {
  await platform?.stop();
  await closeDb();
});

const approvals = (token: string) => http('GET', `${platform.holderUrl}/approvals`, { headers: tenantHeaders(tenantId, token) });
const signedWith = (secret: string) => {
  const now = Math.floor(Date.now() / 1000);
  return jwt.sign({ sub: holder.holder.id, tid: tenantId, type: 'PERSON', iat: now, exp: now + 600 }, secret, { algorithm: 'HS256' });
};

test("a token signed with the source's former development secret is 401", async () => {
  expect((await approvals(holder.token)).status).toBe(200);
  const forged = await approvals(signedWith(FORMER_DEVELOPMENT_JWT_SECRET));
  expect(forged.status).toBe(401);
  expect(forged.body).toMatchObject({ code: expect.any(String), message: expect.any(String) });
});

test('the platform signs with the secret generated for this machine in ./data (0600)', async () => {
  expect(statSync('data/jwt-secret').mode & 0o777).toBe(0o600);
  expect(statSync('data/key-pepper').mode & 0o777).toBe(0o600);
  expect((await approvals(signedWith(readFileSync('data/jwt-secret', 'utf8')))).status).toBe(200);
});

test("the operator CLI's tenant key authenticates at the api: both key it with the same generated pepper", async () => {
  const { key } = await adminOk(platform.env, 'tenant-key:create', '--tenant', tenantId);
  const res = await http('POST', `${platform.holderUrl}/authenticate/clients`, {
    body: { document: holder.document },
    headers: { ...tenantHeaders(tenantId), 'x-tenant-api-key': key },
  });
  expect(res.status).toBe(200);
  expect(res.body.entity.id).toBe(holder.holder.id);
  expect((await approvals(res.body.token)).status).toBe(200);
});
