import type { EntityManager } from '@mikro-orm/postgresql';
import { getOwnAccount } from '../accounts/service.ts';
import { holderAccountByNumber } from '../accounts/store.ts';
import type { Config } from '../config.ts';
import { insertHandOffs } from '../handoff/store.ts';
import type { HolderAuth } from '../identity/authenticator.ts';
import { operatingAccount } from '../identity/operating-account.ts';
import { checkPin } from '../identity/pin.ts';
import { DomainError, notFound, refusals } from '../shared/errors.ts';
import { newUuid } from '../shared/ids.ts';
import { decodeCursor, pageOf } from '../shared/pagination.ts';
import { delayedEffectCancelledWake, delayedEffectStart } from '../../workflows/contracts/delayed-effect.ts';
import { insertContact, listContactsOf, markContactRemoved, type Contact, type ContactTarget } from './store.ts';

/**
 * Trusted contacts ("favorecidos"): a holder registers a Pix key, or a branch and account of the tenant, with the PIN;
 * it is trusted `TRUSTED_CONTACT_DELAY_MS` (24 h) later, when its delayed-effect workflow applies `trustContact`, and
 * payments to it are then exempt from the night limit (not the monthly one). Nothing here calls Temporal: the
 * workflow's hand-off is written with the contact and started by the worker's reconciler.
 */

/** A contact as the holder asks for it: an account by branch and number as written (leading zeros or not). */
export type ContactRequest = Extract<ContactTarget, { kind: 'PIX_KEY' }> | { kind: 'ACCOUNT'; branch: string; account: string };

/** The contact's account as the tenant numbers it: another holder account of the tenant. */
async function accountTarget(em: EntityManager, source: { id: string; tenantId: string }, request: { branch: string; account: string }): Promise<ContactTarget> {
  const found = await holderAccountByNumber(em, source.tenantId, request.branch, request.account);
  if (!found) throw new DomainError('DESTINATION_NOT_FOUND', undefined, [{ path: 'body.account', message: 'no account with this branch and number in this tenant' }]);
  if (found.id === source.id) throw new DomainError('SAME_ACCOUNT', undefined, [{ path: 'body.account', message: 'the account itself' }]);
  return { kind: 'ACCOUNT', branch: found.branch, account: found.account };
}
accountTarget.raises = refusals('DESTINATION_NOT_FOUND', 'SAME_ACCOUNT');

/**
 * Adds a contact to the holder's operating account: the contact is checked first, then the PIN, then it is recorded
 * with its workflow's hand-off in one transaction. The same key or account twice (not removed) is 409.
 */
export async function addContact(config: Config, auth: HolderAuth, accountId: string, request: ContactRequest, pin: string | undefined): Promise<Contact> {
  const account = await operatingAccount(auth, accountId);
  const target = request.kind === 'ACCOUNT' ? await accountTarget(auth.em, account, request) : request;
  await checkPin(auth, config, pin);
  return auth.em.transactional(async (em) => {
    const contact = await insertContact(em, { id: newUuid(), tenantId: account.tenantId, accountId: account.id, target, delayMs: config.TRUSTED_CONTACT_DELAY_MS });
    if (!contact) throw new DomainError('CONTACT_ALREADY_EXISTS');
    await insertHandOffs(em, config.TEMPORAL_TASK_QUEUE, [delayedEffectStart(trustRun(contact))], { dueNow: true });
    return contact;
  });
}
addContact.raises = refusals(operatingAccount, accountTarget, checkPin, 'CONTACT_ALREADY_EXISTS');

/** The holder's contacts of one of their accounts (not removed), newest first, a page at a time. */
export async function listContacts(em: EntityManager, cursorKey: string, holder: { id: string; tenantId: string }, accountId: string, limit: number, cursor: string | undefined) {
  const account = await getOwnAccount(em, holder, accountId);
  const scope = `contacts:${account.id}`;
  const after = cursor === undefined ? null : decodeCursor(cursorKey, scope, cursor);
  const { items, pagination } = pageOf(await listContactsOf(em, account.id, after, limit + 1), limit, cursorKey, scope);
  return { contacts: items, pagination };
}
listContacts.raises = refusals(getOwnAccount);

/**
 * Removes a contact at once (no PIN: it only takes an exemption away). A contact still waiting has its workflow
 * woken to end, through a hand-off written in the same transaction; the workflow's step would find it removed anyway.
 */
export async function removeContact(config: Config, auth: HolderAuth, accountId: string, contactId: string): Promise<Contact> {
  const account = await getOwnAccount(auth.em, auth.holder, accountId);
  return auth.em.transactional(async (em) => {
    const removed = await markContactRemoved(em, account.id, contactId);
    if (!removed) throw notFound('Contact');
    if (removed.trustedFrom === null) await insertHandOffs(em, config.TEMPORAL_TASK_QUEUE, [delayedEffectCancelledWake(trustRun(removed))], { dueNow: true });
    return removed;
  });
}
removeContact.raises = refusals(getOwnAccount, 'NOT_FOUND');

/**
 * The contact's delayed-effect run. Its timer ends a millisecond after `trustsAt` as read (milliseconds; the database
 * keeps microseconds), so the step never runs before the wait it checks is over.
 */
const trustRun = (contact: Contact) => ({
  kind: 'TRUSTED_CONTACT' as const,
  recordId: contact.id,
  tenantId: contact.tenantId,
  accountId: contact.accountId,
  effectiveAt: new Date(Date.parse(contact.trustsAt) + 1).toISOString(),
});
