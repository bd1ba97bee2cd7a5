/**
 * Trusted contacts in process, against the run's database: the rule the payments read (`is_trusted_contact`, in
 * src/ledger/sql/rules.sql) and the delayed effect that makes a contact trusted (`trustContact`, the step of its
 * delayed-effect workflow), without HTTP or Temporal. test/contacts.test.ts drives the same through the api and the
 * worker.
 */
import { randomUUID } from 'node:crypto';
import { expect, test } from '@jest/globals';
import { isTrustedReceiver } from '../../src/contacts/receiver.ts';
import { insertContact, markContactRemoved, type ContactTarget } from '../../src/contacts/store.ts';
import { trustContact } from '../../src/contacts/trust.ts';
import { PLATFORM_ISPB } from '../../src/shared/institution.ts';
import { sql } from '../support/db.ts';
import { domainDatabase, onboardedHolder } from './support/accounts.ts';

const db = domainDatabase();

/** A contact of the account, due to be trusted `delayMs` after it is added. */
async function added(tenantId: string, accountId: string, target: ContactTarget, delayMs = 0) {
  const contact = await insertContact(db.em(), { id: randomUUID(), tenantId, accountId, target, delayMs });
  return contact!;
}

const isTrusted = async (accountId: string, receiver: { pixKey?: string; branch?: string; account?: string }, at = 'now()') =>
  (
    await sql<{ trusted: boolean }>(`select is_trusted_contact($1, $2, $3, $4, ${at}) as trusted`, [
      accountId,
      receiver.pixKey ?? null,
      receiver.branch ?? null,
      receiver.account ?? null,
    ])
  )[0]!.trusted;

const trustedFrom = async (contactId: string) => (await sql<{ trusted_from: Date | null }>('select trusted_from from trusted_contact where id = $1', [contactId]))[0]!.trusted_from;

test('a contact counts only once its delayed effect made it trusted, from then on, and only for its own account', async () => {
  const tenantId = await db.tenant();
  const [payer, other] = await Promise.all([onboardedHolder(db.em(), tenantId), onboardedHolder(db.em(), tenantId)]);
  const contact = await added(tenantId, payer.accountId, { kind: 'PIX_KEY', pixKey: 'maria@example.com', pixKeyType: 'EMAIL' });
  // Added, its wait over, but not applied yet: not trusted.
  expect(await isTrusted(payer.accountId, { pixKey: 'maria@example.com' })).toBe(false);

  expect(await trustContact(db.em(), contact.id)).toBe('APPLIED');
  const since = await trustedFrom(contact.id);
  expect(since).not.toBeNull();
  expect(await isTrusted(payer.accountId, { pixKey: 'maria@example.com' })).toBe(true);
  // Keys are compared in their canonical form (an e-mail key lowercase).
  expect(await isTrusted(payer.accountId, { pixKey: 'Maria@Example.com' })).toBe(true);
  // Not before it was trusted: a payment is judged at its own time.
  expect(await isTrusted(payer.accountId, { pixKey: 'maria@example.com' }, "now() - interval '1 minute'")).toBe(false);
  expect(await isTrusted(payer.accountId, { pixKey: 'joao@example.com' })).toBe(false);
  expect(await isTrusted(other.accountId, { pixKey: 'maria@example.com' })).toBe(false);

  // Applied again (a retried or replayed step): nothing changes.
  expect(await trustContact(db.em(), contact.id)).toBe('APPLIED');
  expect(await trustedFrom(contact.id)).toEqual(since);
});

test('an account contact matches its branch and number as a client writes them, leading zeros or not', async () => {
  const tenantId = await db.tenant();
  const [payer, receiver] = await Promise.all([onboardedHolder(db.em(), tenantId), onboardedHolder(db.em(), tenantId)]);
  const contact = await added(tenantId, payer.accountId, { kind: 'ACCOUNT', branch: receiver.agency, account: receiver.number });
  await trustContact(db.em(), contact.id);
  expect(await isTrusted(payer.accountId, { branch: receiver.agency, account: receiver.number })).toBe(true);
  expect(await isTrusted(payer.accountId, { branch: receiver.agency.replace(/^0+/, ''), account: `00${receiver.number}` })).toBe(true);
  expect(await isTrusted(payer.accountId, { branch: receiver.agency, account: `${receiver.number}1` })).toBe(false);
  expect(await isTrusted(payer.accountId, { branch: '0002', account: receiver.number })).toBe(false);
  // A key contact and an account contact do not stand for each other.
  expect(await isTrusted(payer.accountId, { pixKey: receiver.number })).toBe(false);
});

test('not trusted before its time: the step refuses (and is retried) while the wait runs on the database clock', async () => {
  const tenantId = await db.tenant();
  const payer = await onboardedHolder(db.em(), tenantId);
  const contact = await added(tenantId, payer.accountId, { kind: 'PIX_KEY', pixKey: '+5511987654321', pixKeyType: 'PHONE' }, 3_600_000);
  await expect(trustContact(db.em(), contact.id)).rejects.toThrow(/not due yet/);
  expect(await trustedFrom(contact.id)).toBeNull();
  expect(await isTrusted(payer.accountId, { pixKey: '+5511987654321' }, "now() + interval '2 hours'")).toBe(false);
});

test('a removed contact is never trusted: removed during its wait, the step answers CANCELLED; removed after, it no longer counts', async () => {
  const tenantId = await db.tenant();
  const payer = await onboardedHolder(db.em(), tenantId);
  const waiting = await added(tenantId, payer.accountId, { kind: 'PIX_KEY', pixKey: '11144477735', pixKeyType: 'CPF' });
  expect(await markContactRemoved(db.em(), payer.accountId, waiting.id)).toMatchObject({ id: waiting.id, trustedFrom: null });
  expect(await trustContact(db.em(), waiting.id)).toBe('CANCELLED');
  expect(await trustedFrom(waiting.id)).toBeNull();

  const trusted = await added(tenantId, payer.accountId, { kind: 'PIX_KEY', pixKey: '11144477735', pixKeyType: 'CPF' });
  await trustContact(db.em(), trusted.id);
  expect(await isTrusted(payer.accountId, { pixKey: '11144477735' })).toBe(true);
  await markContactRemoved(db.em(), payer.accountId, trusted.id);
  expect(await isTrusted(payer.accountId, { pixKey: '11144477735' })).toBe(false);
  expect(await trustContact(db.em(), trusted.id)).toBe('APPLIED');
  expect(await isTrusted(payer.accountId, { pixKey: '11144477735' })).toBe(false);
});

test('one live contact per key or account of an account: the same again is refused until it is removed', async () => {
  const tenantId = await db.tenant();
  const payer = await onboardedHolder(db.em(), tenantId);
  const key: ContactTarget = { kind: 'PIX_KEY', pixKey: 'loja@example.com', pixKeyType: 'EMAIL' };
  const first = await added(tenantId, payer.accountId, key);
  expect(await insertContact(db.em(), { id: randomUUID(), tenantId, accountId: payer.accountId, target: key, delayMs: 0 })).toBeNull();
  await markContactRemoved(db.em(), payer.accountId, first.id);
  expect(await insertContact(db.em(), { id: randomUUID(), tenantId, accountId: payer.accountId, target: key, delayMs: 0 })).not.toBeNull();
});

test("a payment's receiver: by its key anywhere, by its branch and number only at this platform", async () => {
  const tenantId = await db.tenant();
  const [payer, receiver] = await Promise.all([onboardedHolder(db.em(), tenantId), onboardedHolder(db.em(), tenantId)]);
  await trustContact(db.em(), (await added(tenantId, payer.accountId, { kind: 'ACCOUNT', branch: receiver.agency, account: receiver.number })).id);
  await trustContact(db.em(), (await added(tenantId, payer.accountId, { kind: 'PIX_KEY', pixKey: 'loja@example.com', pixKeyType: 'EMAIL' })).id);
  const at = (ispb: string, pixKey = 'other@example.com') => isTrustedReceiver(db.em(), payer.accountId, { pixKey, beneficiary: { ispb, branch: receiver.agency, account: receiver.number } });
  expect(await at(PLATFORM_ISPB)).toBe(true);
  // The same numbers at another institution are another account.
  expect(await at('99999999')).toBe(false);
  expect(await at('99999999', 'loja@example.com')).toBe(true);
});
