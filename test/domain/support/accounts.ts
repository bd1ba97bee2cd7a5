/**
 * In-process fixtures for the domain tests: tenants, onboarded holders and funded accounts made by the same domain
 * functions the api and the workflows call, on the run's database, with no HTTP and no workflow in between.
 */
import { randomInt, randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll } from '@jest/globals';
import type { EntityManager } from '@mikro-orm/postgresql';
import { Account } from '../../../src/accounts/entities.ts';
import { setFees } from '../../../src/fees/service.ts';
import { Holder } from '../../../src/identity/entities.ts';
import { approveOnboarding, provisionOnboardingAccount } from '../../../src/identity/onboarding-steps.ts';
import { openDatabase } from '../../../src/database.ts';
import type { Orm } from '../../../src/persistence/orm.ts';
import { receivePix } from '../../../src/pix/incoming.ts';
import { createTenant } from '../../../src/tenants/service.ts';
import { closeDb, sql } from '../../support/db.ts';
import { newCpf } from '../../support/fixtures.ts';
import { expectLedgerConsistent } from '../../support/ledger.ts';

const openTestOrm = (): Promise<Orm> => openDatabase(process.env.TEST_DATABASE_URL!, 4);

/**
 * The run's database for one test file: an ORM opened before its tests, and after each test the check that every
 * tenant it made through `tenant()` still has a consistent ledger that sums to zero.
 */
export function domainDatabase() {
  let orm: Orm | undefined;
  const tenants: string[] = [];
  beforeAll(async () => {
    orm = await openTestOrm();
  });
  afterEach(async () => {
    for (const tenantId of tenants.splice(0)) await expectLedgerConsistent(tenantId);
  });
  afterAll(async () => {
    await orm?.close();
    await closeDb();
  });
  return {
    em: (): EntityManager => orm!.em.fork(),
    async tenant(fees: Parameters<typeof setFees>[3] = {}): Promise<string> {
      const tenantId = await newTenant(orm!.em.fork(), fees);
      tenants.push(tenantId);
      return tenantId;
    },
  };
}

/** A new tenant (with its fee revenue and settlement accounts) and, when given, its fee schedule. */
export async function newTenant(em: EntityManager, fees: Parameters<typeof setFees>[3] = {}): Promise<string> {
  const tenant = await createTenant(em.fork(), { name: `Domain ${randomUUID().slice(0, 8)}`, pinExempt: false });
  if (Object.keys(fees).length > 0) await setFees(em.fork(), tenant.id, null, fees);
  return tenant.id;
}

export interface HolderAccount {
  holderId: string;
  document: string;
  accountId: string;
  agency: string;
  number: string;
}

/** A registered holder, before KYC: PENDING, with no account yet. */
export async function newHolder(em: EntityManager, tenantId: string, name = 'Maria da Silva'): Promise<Holder> {
  const fork = em.fork();
  const holder = fork.create(Holder, {
    id: randomUUID(),
    tenantId,
    type: 'PERSON',
    name,
    document: newCpf(),
    email: `${randomUUID()}@example.com`,
    emailConfirmed: false,
    phone: null,
    phoneConfirmed: false,
    passwordHash: 'unused: these tests never log in',
    status: 'PENDING',
    onboardingStep: 'PENDING',
    onboardingRequisitionId: randomInt(10_000_000_000_000, 100_000_000_000_000),
    kyc: null,
    pinHash: null,
    pinFailedAttempts: 0,
    pinLockedAt: null,
  });
  await fork.flush();
  return holder;
}

/** A holder through the onboarding steps (account provisioned, KYC approved): ACTIVE, with an APPROVED account. */
export async function onboardedHolder(em: EntityManager, tenantId: string, name?: string): Promise<HolderAccount> {
  const holder = await newHolder(em, tenantId, name);
  const accountId = await provisionOnboardingAccount(em.fork(), holder.id);
  await approveOnboarding(em.fork(), holder.id, { approved: true });
  const account = await em.fork().findOneOrFail(Account, { id: accountId });
  return { holderId: holder.id, document: holder.document, accountId, agency: account.agency, number: account.number };
}

/** Money in through an incoming Pix, the ledger's own path (the settlement account pays it). */
export async function fund(em: EntityManager, tenantId: string, accountId: string, amountCents: bigint): Promise<void> {
  await receivePix(em.fork(), {
    tenantId,
    accountId,
    amountCents,
    payer: { name: 'Pagador Teste', document: newCpf(), ispb: '12345678', institution: 'Banco Teste', branch: '0001', account: '123456' },
  });
}

/** One of the tenant's own accounts (created with the tenant): where its fees accrue, or its side of every Pix. */
export async function tenantAccountId(tenantId: string, kind: 'FEE_REVENUE' | 'SETTLEMENT'): Promise<string> {
  const [row] = await sql<{ id: string }>('select id from account where tenant_id = $1 and kind = $2', [tenantId, kind]);
  return row!.id;
}
