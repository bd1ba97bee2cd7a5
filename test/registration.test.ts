import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import jwt from 'jsonwebtoken';
import { closeDb, sql } from './support/db.ts';
import { newCnpj, newCpf, newTenant, PASSWORD, register, tenantHeaders } from './support/fixtures.ts';
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

const post = (path: string, body: unknown, headers: Record<string, string> = tenantHeaders(tenantId)) =>
  http('POST', `${platform.holderUrl}${path}`, { body, headers });

describe.each([
  ['PERSON', '/persons', 'person', newCpf],
  ['COMPANY', '/companies', 'company', newCnpj],
] as const)('%s registration', (type, path, key, newDocument) => {
  test('creates a PENDING holder with an onboarding link and a token usable at once', async () => {
    const document = newDocument();
    const res = await post(path, { name: 'Nome Completo', document, email: `  Fulano.${document}@Example.COM `, password: PASSWORD });
    expect(res.status).toBe(201);
    const holder = res.body[key];
    expect(holder).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      email: `fulano.${document}@example.com`,
      emailConfirmation: false,
      phone: null,
      phoneConfirmation: false,
      name: 'Nome Completo',
      document,
      status: 'PENDING',
      onboardingStep: 'PENDING',
      onboardingLink: `${platform.holderUrl}/onboarding/${holder.onboardingRequisitionId}`,
      onboardingRequisitionId: expect.any(Number),
      hasPin: false,
    });
    const claims = jwt.decode(res.body.token) as jwt.JwtPayload;
    expect(claims.type).toBe(type);
    expect(claims.exp! - claims.iat!).toBe(3600);
    // Usable at once: the PIN can be created before KYC.
    const pin = await post('/passwords/create-pin', { pin: '2580' }, tenantHeaders(tenantId, res.body.token));
    expect(pin.status).toBe(201);
    const [row] = await sql('select password_hash, pin_hash from holder where id = $1', [holder.id]);
    expect(row.password_hash).toMatch(/^\$argon2id\$/);
    expect(row.pin_hash).toMatch(/^\$argon2id\$/);
  });

  test('the same document registers in another tenant with its own password; in one tenant it is unique', async () => {
    const document = newDocument();
    const other = await newTenant(platform);
    const a = await post(path, { name: 'Titular A', document, email: `a${document}@example.com`, password: PASSWORD });
    const b = await post(path, { name: 'Titular B', document, email: `a${document}@example.com`, password: 'other-pass-99' }, tenantHeaders(other));
    expect([a.status, b.status]).toEqual([201, 201]);
    const dup = await post(path, { name: 'Titular C', document, email: `${document}@example.com`, password: PASSWORD });
    expect(dup.status).toBe(409);
    expect(dup.body.code).toBe('DOCUMENT_TAKEN');
    const rows = await sql('select count(*)::int as n from holder where document = $1', [document]);
    expect(rows[0].n).toBe(2);
  });
});

describe('registration validation', () => {
  const valid = () => ({ name: 'Maria da Silva', document: newCpf(), email: `${newCpf()}@example.com`, password: PASSWORD });

  test.each([
    ['bad CPF check digit', (b: any) => ({ ...b, document: b.document.slice(0, 10) + String((Number(b.document[10]) + 1) % 10) }), 'body.document'],
    ['10 digits', (b: any) => ({ ...b, document: b.document.slice(0, 10) }), 'body.document'],
    ['12 digits', (b: any) => ({ ...b, document: `${b.document}0` }), 'body.document'],
    ['13 digits', (b: any) => ({ ...b, document: `${b.document}00` }), 'body.document'],
    ['letters', (b: any) => ({ ...b, document: `123456789ab` }), 'body.document'],
    ['all-equal digits', (b: any) => ({ ...b, document: '11111111111' }), 'body.document'],
    ['a CNPJ on /persons', (b: any) => ({ ...b, document: newCnpj() }), 'body.document'],
    ['document as a number', (b: any) => ({ ...b, document: Number(b.document) }), 'body.document'],
    ['missing name', (b: any) => ({ ...b, name: undefined }), 'body.name'],
    ['bad e-mail', (b: any) => ({ ...b, email: 'not-an-email' }), 'body.email'],
    ['short password', (b: any) => ({ ...b, password: 'abc12' }), 'body.password'],
    ['password without digits', (b: any) => ({ ...b, password: 'onlyletters' }), 'body.password'],
  ])('%s: 400 VALIDATION_ERROR naming the field, nothing stored', async (_case, mutate, path) => {
    const body = mutate(valid());
    const res = await post('/persons', body);
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('VALIDATION_ERROR');
    expect(res.body.details.map((d: any) => d.path)).toContain(path);
    const rows = await sql('select count(*)::int as n from holder where email = $1', [String(body.email).trim().toLowerCase()]);
    expect(rows[0].n).toBe(0);
  });

  test('a CNPJ with a bad check digit is refused on /companies', async () => {
    const cnpj = newCnpj();
    const res = await post('/companies', { name: 'Empresa X', document: `${cnpj.slice(0, 13)}${(Number(cnpj[13]) + 1) % 10}`, email: 'x@example.com', password: PASSWORD });
    expect(res.status).toBe(400);
    expect(res.body.details[0]).toEqual({ path: 'body.document', message: 'invalid CNPJ check digits' });
  });

  test('duplicate e-mail in the tenant is 409 EMAIL_TAKEN', async () => {
    const first = valid();
    expect((await post('/persons', first)).status).toBe(201);
    const res = await post('/persons', { ...valid(), email: first.email.toUpperCase() });
    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({ code: 'EMAIL_TAKEN' });
  });

  test.each([
    ['missing X-Tenant-Id', {}, 400, 'VALIDATION_ERROR'],
    ['X-Tenant-Id not a UUID', { 'x-tenant-id': 'acme' }, 400, 'VALIDATION_ERROR'],
    ['unknown tenant', { 'x-tenant-id': '00000000-0000-4000-8000-000000000000' }, 400, 'UNKNOWN_TENANT'],
  ])('%s: %i %s', async (_case, headers, status, code) => {
    const res = await post('/persons', valid(), headers as Record<string, string>);
    expect(res.status).toBe(status);
    expect(res.body.code).toBe(code);
  });

  test('Accept that excludes JSON is 406', async () => {
    const res = await post('/persons', valid(), { ...tenantHeaders(tenantId), accept: 'text/html' });
    expect(res.status).toBe(406);
    expect(res.body.code).toBe('NOT_ACCEPTABLE');
  });

  test('a body that is not JSON is 400', async () => {
    const res = await http('POST', `${platform.holderUrl}/persons`, { body: 'name=x', headers: { ...tenantHeaders(tenantId), 'content-type': 'application/x-www-form-urlencoded' } });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('VALIDATION_ERROR');
  });

  test('the registered holder is in the OpenAPI document', async () => {
    const doc = (await http('GET', `${platform.holderUrl}/openapi.json`)).body;
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(['/persons', '/companies', '/authenticate', '/authenticate/clients', '/passwords/create-pin', '/passwords/change-pin']));
    expect(doc.paths['/persons'].post.requestBody.content['application/json'].schema.$ref).toBe('#/components/schemas/PersonRegistration');
  });
});

test('registering does not wait for KYC: a second registration keeps working when Temporal is slow to start', async () => {
  // The onboarding run exists for every holder, found by its business ids.
  const r = await register(platform, tenantId);
  const rows = await sql('select onboarding_step, status from holder where id = $1', [r.holder.id]);
  expect(rows[0]).toEqual({ onboarding_step: 'PENDING', status: 'PENDING' });
});
