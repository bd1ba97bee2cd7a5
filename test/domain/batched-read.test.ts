/**
 * The request path's reads by key (`readBatched`), on the run's database: concurrent reads that wait for a lane leave
 * together as one statement, and each still gets its own row, or none; a read whose key the server refuses fails
 * alone; inside a transaction a read sees what the transaction wrote; each read gives the values the ORM's own read
 * gives (`readOnlyEntity`), with a holder's hashes kept out of its JSON.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, jest, test } from '@jest/globals';
import { Account } from '../../src/accounts/entities.ts';
import { findHolderAccount } from '../../src/accounts/store.ts';
import { Holder } from '../../src/identity/entities.ts';
import { findTenantHolder } from '../../src/identity/holder-store.ts';
import { domainDatabase, fund, newHolder, onboardedHolder } from './support/accounts.ts';

const db = domainDatabase();

describe('reads batched under load answer as they would alone', () => {
  test('40 concurrent reads of holders and accounts, some of another tenant or unknown: each its own answer', async () => {
    const em = db.em();
    const [tenantId, otherTenantId] = [await db.tenant(), await db.tenant()];
    const holders = await Promise.all(Array.from({ length: 8 }, (_, i) => onboardedHolder(em, tenantId, `Pessoa ${i}`)));
    // Watched, not replaced: every statement still reaches the server.
    const pool = (await em.getConnection().getNativeClient()) as unknown as { query(q: { name?: string }): Promise<unknown> };
    const sent = jest.spyOn(pool, 'query');
    const reads = Array.from({ length: 40 }, (_, i) => {
      const h = holders[i % holders.length]!;
      if (i % 5 === 3) return { expected: null, holder: findTenantHolder(db.em(), h.holderId, otherTenantId), account: findHolderAccount(db.em(), h.accountId, h.holderId, otherTenantId) };
      if (i % 5 === 4) return { expected: null, holder: findTenantHolder(db.em(), randomUUID(), tenantId), account: findHolderAccount(db.em(), randomUUID(), h.holderId, tenantId) };
      return { expected: h, holder: findTenantHolder(db.em(), h.holderId, tenantId), account: findHolderAccount(db.em(), h.accountId, h.holderId, tenantId) };
    });
    for (const read of reads) {
      const [holder, account] = await Promise.all([read.holder, read.account]);
      if (read.expected === null) {
        expect(holder).toBeNull();
        expect(account).toBeNull();
      } else {
        expect(holder).toMatchObject({ id: read.expected.holderId, tenantId, status: 'ACTIVE' });
        expect(account).toMatchObject({ id: read.expected.accountId, holderId: read.expected.holderId, number: read.expected.number, moneyRefusal: null });
      }
    }
    const names = sent.mock.calls.map(([q]) => q.name);
    sent.mockRestore();
    // The first reads took the free lanes alone; the rest left together.
    expect(names.filter((n) => n === 'find_tenant_holder_many').length).toBeGreaterThan(0);
    expect(names.filter((n) => n === 'find_holder_account_many').length).toBeGreaterThan(0);
    expect(names.filter((n) => n?.startsWith('find_tenant_holder')).length).toBeLessThan(40);
  });

  test('a key the server refuses fails its own read only', async () => {
    const tenantId = await db.tenant();
    const h = await onboardedHolder(db.em(), tenantId, 'Ana Souza');
    const reads = Array.from({ length: 20 }, (_, i) => findTenantHolder(db.em(), i === 10 ? 'not-a-uuid' : h.holderId, tenantId));
    const results = await Promise.allSettled(reads);
    expect(results[10]).toMatchObject({ status: 'rejected', reason: { code: '22P02' } });
    results.forEach((r, i) => {
      if (i !== 10) expect(r).toMatchObject({ status: 'fulfilled', value: { id: h.holderId } });
    });
  });
});

test('inside a transaction a read sees what the transaction wrote', async () => {
  const tenantId = await db.tenant();
  const holder = await newHolder(db.em(), tenantId, 'Bia Lima');
  await db.em().transactional(async (tx) => {
    await tx.nativeUpdate(Holder, { id: holder.id }, { name: 'Bia Lima Souza' });
    expect(await findTenantHolder(tx, holder.id, tenantId)).toMatchObject({ name: 'Bia Lima Souza' });
    throw new Error('rolled back');
  }).catch((err: Error) => expect(err.message).toBe('rolled back'));
  expect(await findTenantHolder(db.em(), holder.id, tenantId)).toMatchObject({ name: 'Bia Lima' });
});

test("a read gives the ORM's values, converted alike, and keeps a holder's hashes out of its JSON", async () => {
  const tenantId = await db.tenant();
  const h = await onboardedHolder(db.em(), tenantId, 'Caio Prado');
  await fund(db.em(), tenantId, h.accountId, 12_345n);
  await db.em().nativeUpdate(Holder, { id: h.holderId }, { pinHash: 'a-pin-hash', kyc: { decision: 'APPROVED', partner: { name: 'Sócia' } } });
  await db.em().nativeUpdate(Account, { id: h.accountId }, { monthlyGoalCents: 50_000n });

  const holder = (await findTenantHolder(db.em(), h.holderId, tenantId))!;
  const account = (await findHolderAccount(db.em(), h.accountId, h.holderId, tenantId))!;
  const ormHolder = await db.em().findOneOrFail(Holder, { id: h.holderId });
  const ormAccount = await db.em().findOneOrFail(Account, { id: h.accountId });
  const values = (entity: object, names: string[]) => Object.fromEntries(names.map((name) => [name, (entity as Record<string, unknown>)[name]]));
  const holderProps = db.em().getMetadata().get(Holder).props.map((prop) => prop.name);
  const accountProps = db.em().getMetadata().get(Account).props.map((prop) => prop.name);
  expect(values(holder, holderProps)).toStrictEqual(values(ormHolder, holderProps));
  expect(values(account, accountProps)).toStrictEqual(values(ormAccount, accountProps));
  expect(account).toMatchObject({ balanceCents: 12_345n, monthlyGoalCents: 50_000n, moneyRefusal: null });
  expect(holder.createdAt).toBeInstanceOf(Date);
  expect(holder.pinHash).toBe('a-pin-hash');
  const json = JSON.stringify(holder);
  expect(json).not.toContain('a-pin-hash');
  expect(JSON.parse(json)).not.toHaveProperty('passwordHash');
  expect(JSON.parse(json)).toMatchObject({ id: h.holderId, kyc: { partner: { name: 'Sócia' } } });
});
