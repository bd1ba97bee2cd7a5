import { afterAll, describe, expect, test } from '@jest/globals';
import { admin, adminOk } from './support/admin.ts';
import { closeDb, sql } from './support/db.ts';
import { testEnv } from './support/platform.ts';

const env = testEnv();
afterAll(closeDb);

describe('operator command line', () => {
  test('tenant:create prints the tenant id and stores the tenant', async () => {
    const out = await adminOk(env, 'tenant:create', '--name', 'Banco Azul', '--pin-exempt');
    expect(out).toEqual({ tenantId: expect.stringMatching(/^[0-9a-f-]{36}$/) });
    const [row] = await sql('select name, pin_exempt from tenant where id = $1', [out.tenantId]);
    expect(row).toEqual({ name: 'Banco Azul', pin_exempt: true });
  });

  test("ledger:check finds a tenant whose ledger does not sum to zero, or a balance off its entries, and names it", async () => {
    const { tenantId } = await adminOk(env, 'tenant:create', '--name', 'Banco do Livro');
    expect(await adminOk(env, 'ledger:check', '--tenant', tenantId)).toEqual({ status: 'consistent', tenantsChecked: 1, inconsistent: [] });
    // What a lost posting leaves behind: the settlement account's balance moved without its entry.
    await sql(`update account set balance_cents = balance_cents - 700 where tenant_id = $1 and kind = 'SETTLEMENT'`, [tenantId]);
    const broken = await admin(env, 'ledger:check', '--tenant', tenantId);
    expect([broken.exitCode, broken.err.code]).toEqual([1, 'COMMAND_FAILED']);
    expect(JSON.parse(broken.err.message.replace(/^ledger inconsistent: /, ''))).toEqual({
      tenantsChecked: 1,
      inconsistent: [{ tenantId, sumCents: '-700', accountsOffTheirEntries: 1 }],
    });
    await sql(`update account set balance_cents = balance_cents + 700 where tenant_id = $1 and kind = 'SETTLEMENT'`, [tenantId]);
    expect((await adminOk(env, 'ledger:check', '--tenant', tenantId)).status).toBe('consistent');
    expect((await admin(env, 'ledger:check', '--tenant', 'not-a-uuid')).exitCode).not.toBe(0);
  });

  test('tenant-key:create shows the key once and stores only its keyed hash; revoke marks it', async () => {
    const { tenantId } = await adminOk(env, 'tenant:create', '--name', 'Banco Verde');
    const created = await adminOk(env, 'tenant-key:create', '--tenant', tenantId);
    expect(created.key).toMatch(/^tnk_[a-z0-9]{12}\.[A-Za-z0-9_-]{43}$/);
    const [row] = await sql('select prefix, secret_hash, revoked_at from tenant_api_key where id = $1', [created.id]);
    const secret = created.key.split('.')[1];
    expect(created.key).toContain(row.prefix);
    expect(row.secret_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(row.secret_hash).not.toContain(secret);
    expect(row.revoked_at).toBeNull();

    const revoked = await adminOk(env, 'tenant-key:revoke', '--tenant', tenantId, '--id', created.id);
    expect(revoked).toEqual({ id: created.id, revokedAt: expect.any(String) });
    const [after] = await sql('select revoked_at from tenant_api_key where id = $1', [created.id]);
    expect(after.revoked_at).toBeInstanceOf(Date);
  });

  test('tenant-key:revoke of another tenant\'s key is not found and changes nothing', async () => {
    const a = await adminOk(env, 'tenant:create', '--name', 'A');
    const b = await adminOk(env, 'tenant:create', '--name', 'B');
    const key = await adminOk(env, 'tenant-key:create', '--tenant', a.tenantId);
    const r = await admin(env, 'tenant-key:revoke', '--tenant', b.tenantId, '--id', key.id);
    expect(r.exitCode).not.toBe(0);
    expect(r.err).toEqual({ code: 'NOT_FOUND', message: 'Tenant API key not found' });
    const [row] = await sql('select revoked_at from tenant_api_key where id = $1', [key.id]);
    expect(row.revoked_at).toBeNull();
  });

  test('api-key:create refuses Pix accounts the tenant does not have, and stores nothing', async () => {
    const { tenantId } = await adminOk(env, 'tenant:create', '--name', 'Integrador');
    const r = await admin(env, 'api-key:create', '--tenant', tenantId, '--pix-account', 'nosuchaccount');
    expect(r.exitCode).not.toBe(0);
    expect(r.err).toEqual({ code: 'NOT_FOUND', message: 'Pix account(s) not found in this tenant: nosuchaccount' });
    expect(await sql('select id from api_key where tenant_id = $1', [tenantId])).toEqual([]);
  });

  test.each([
    [['tenant:create'], 'USAGE_ERROR', /--name/],
    [['tenant-key:create', '--tenant', 'not-a-uuid'], 'USAGE_ERROR', /--tenant/],
    [['api-key:create', '--tenant', '00000000-0000-4000-8000-000000000000'], 'USAGE_ERROR', /pix-account/],
    [['no:such-command'], 'UNKNOWN_COMMAND', /Unknown command/],
    [['tenant-key:create', '--tenant', '00000000-0000-4000-8000-000000000000'], 'NOT_FOUND', /Tenant not found/],
  ])('%j fails with {code, message} on stderr and a non-zero exit', async (args, code, message) => {
    const r = await admin(env, ...(args as string[]));
    expect(r.exitCode).not.toBe(0);
    expect(r.out).toBeUndefined();
    expect(r.err.code).toBe(code);
    expect(r.err.message).toMatch(message);
  });
});
