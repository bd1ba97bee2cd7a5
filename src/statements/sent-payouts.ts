import type { EntityManager } from '@mikro-orm/postgresql';
import { notFound, refusals } from '../shared/errors.ts';
import { entriesByMovement, findMovement, findReturnsOf } from '../ledger/store.ts';
import { findPayout } from '../pix/payout-store.ts';
import { tevSentBy } from '../transfers/visibility.ts';

/** Section 2.5 of a payout whose debit was posted, for any channel: everything comes from its movement. */
export async function payoutOfMovement(em: EntityManager, movementId: string) {
  const m = await findMovement(em, movementId);
  if (!m) throw new Error(`unknown movement ${movementId}`);
  // Money returned for it (failure, cancellation, refund) shows as its REVERSAL entries.
  const movementIds = [m.id, ...(await findReturnsOf(em, m.id))];
  const byMovement = await entriesByMovement(em, movementIds);
  const entries = movementIds.flatMap((id) => byMovement.get(id) ?? []);
  return {
    id: m.id,
    type: m.direction,
    status: m.payout_status,
    source: m.source,
    description: m.description,
    externalRef: m.external_ref,
    feeAmount: m.fee_cents === '0' ? null : m.fee_cents,
    reversesMovementId: m.reverses_movement_id,
    createdAt: m.created_at,
    entries: entries.map((e) => ({ id: e.id, accountId: e.core_account_id, amount: e.amount_cents, balanceAfter: e.balance_after_cents, kind: e.kind, createdAt: e.created_at })),
    metadata: m.metadata,
  };
}

/**
 * A TEV read as a payout of the account that sent it (its payoutId is the tevId); null when the account did not
 * send it, so the destination side and everyone else get the same 404.
 */
export async function tevPayout(em: EntityManager, account: { id: string; tenantId: string }, tevId: string) {
  const t = await tevSentBy(em, account, tevId);
  if (!t) return null;
  if (t.sourceMovementId) return payoutOfMovement(em, t.sourceMovementId);
  // Refused (FAILED) or not settled yet (PROCESSING): nothing was posted, so the transfer answers for itself, with
  // the counterparts a posted TEV's metadata carries (`tev_beneficiary`, src/ledger/sql/rules.sql) but no endToEndId
  // and no paymentDate, which only settlement gives.
  return {
    id: t.id,
    type: 'DEBIT' as const,
    status: t.status === 'FAILED' ? ('FAILED' as const) : ('PROCESSING' as const),
    source: 'TEF_OUT' as const,
    description: t.description,
    externalRef: t.externalRef,
    feeAmount: null,
    reversesMovementId: null,
    createdAt: t.createdAt,
    entries: [],
    metadata: {
      date: t.createdAt,
      endToEndId: null,
      payer: t.source,
      beneficiary: t.destination.beneficiary,
    },
  };
}

/** The account a payout is read for: its own side of the payment. */
type PayingAccount = { id: string; tenantId: string; agency: string; number: string; pixAccountId: string };

/**
 * A Pix or QR Code payout of the account that sent it. Once debited it is its movement (status, endToEndId and
 * paymentDate follow settlement); before the debit it is PENDING, and refused before any debit it is FAILED.
 */
export async function pixPayout(em: EntityManager, account: PayingAccount, payoutId: string) {
  const p = await findPayout(em, payoutId);
  if (p?.accountId !== account.id) return null;
  if (p.movementId) return payoutOfMovement(em, p.movementId);
  return {
    id: p.id,
    type: 'DEBIT' as const,
    status: p.state === 'REQUESTED' ? ('PENDING' as const) : ('FAILED' as const),
    source: p.channel,
    description: p.description,
    externalRef: null,
    feeAmount: null,
    reversesMovementId: null,
    createdAt: p.createdAt,
    entries: [],
    metadata: {
      date: p.createdAt,
      endToEndId: null,
      payer: { branch: account.agency, account: account.number },
      beneficiary: { ...p.beneficiary, pixKey: p.pixKey, pixKeyType: p.pixKeyType },
      pixAccountId: account.pixAccountId,
    },
  };
}

/** Section 4.8: a payment the account sent, by its payoutId (a TEV by its tevId, a Pix by its payoutId); else 404. */
export async function sentPayout(em: EntityManager, account: PayingAccount, payoutId: string) {
  const payout = (await tevPayout(em, account, payoutId)) ?? (await pixPayout(em, account, payoutId));
  if (!payout) throw notFound('Payout');
  return payout;
}
sentPayout.raises = refusals('NOT_FOUND');
