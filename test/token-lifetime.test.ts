import { afterAll, beforeAll, expect, test } from '@jest/globals';
import jwt from 'jsonwebtoken';
import { adminOk } from './support/admin.ts';
import { login, newTenant, onboarded, tenantHeaders } from './support/fixtures.ts';
import { http } from './support/http.ts';
import { startPlatform, type Platform } from './support/platform.ts';

// The real 1 h / 24 h lifetimes, shortened through configuration so expiry is observed, not assumed.
let platform: Platform;
beforeAll(async () => {
  platform = await startPlatform({ JWT_TTL_SECONDS: '4', CLIENT_JWT_TTL_SECONDS: '6' });
});
afterAll(async () => {
  await platform?.stop();
});

test('password and client tokens stop working when they expire', async () => {
  const tenantId = await newTenant(platform);
  const holder = await onboarded(platform, tenantId);
  const key = await adminOk(platform.env, 'tenant-key:create', '--tenant', tenantId);
  const { body: auth } = await login(platform, holder);
  const { body: client } = await http('POST', `${platform.holderUrl}/authenticate/clients`, {
    body: { document: holder.document },
    headers: { ...tenantHeaders(tenantId), 'x-tenant-api-key': key.key },
  });
  const call = (token: string) =>
    http('PUT', `${platform.holderUrl}/accounts/${holder.account.id}/monthly-goal`, { body: { monthlyGoal: 1 }, headers: tenantHeaders(tenantId, token) });
  const lifetime = (token: string) => {
    const c = jwt.decode(token) as jwt.JwtPayload;
    return c.exp! - c.iat!;
  };
  expect([lifetime(auth.token), lifetime(client.token)]).toEqual([4, 6]);
  expect((await call(auth.token)).status).toBe(200);
  await new Promise((r) => setTimeout(r, 5100));
  const expired = await call(auth.token);
  expect(expired.status).toBe(401);
  expect(expired.body).toEqual({ code: 'UNAUTHORIZED', message: 'Token expired; authenticate again' });
  await new Promise((r) => setTimeout(r, 2000));
  expect((await call(client.token)).status).toBe(401);
});
