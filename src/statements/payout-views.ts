import type { EntityManager } from '@mikro-orm/postgresql';
import { defaultTevDescription, tevBeneficiary } from '../transfers/metadata.ts';
import { notFound } from '../shared/errors.ts';
import { entriesByMovement, findMovement, findReturnsOf } from '../ledger/store.ts';
import { isoUtc } from '../shared/pagination.ts';
import { tevSentBy } from '../transfers/reads.ts';

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
    entries: entries.map((e) => ({ id: e.id, accountId: e.account_id, amount: e.amount_cents, balanceAfter: e.balance_after_cents, kind: e.kind, createdAt: e.created_at })),
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
  // the counterparts a posted TEV's metadata carries (tevMetadata) but no endToEndId and no paymentDate, which only
  // settlement gives. The description is the one the posting stores when the sender gave none.
  const d = t.destination;
  return {
    id: t.id,
    type: 'DEBIT' as const,
    status: t.status === 'FAILED' ? ('FAILED' as const) : ('PROCESSING' as const),
    source: 'TEF_OUT' as const,
    description: t.description ?? defaultTevDescription(d.holderName),
    externalRef: t.externalRef,
    feeAmount: null,
    reversesMovementId: null,
    createdAt: t.createdAt,
    entries: [],
    metadata: {
      date: t.createdAt,
      endToEndId: null,
      payer: t.source,
      beneficiary: tevBeneficiary({ holderName: d.holderName, agency: d.branch, number: d.account, holderDocument: d.holderDocument }),
    },
  };
}

/**
 * A Pix or QR Code payout of the account that sent it. Once debited it is its movement (status, endToEndId and
 * paymentDate follow settlement); before the debit it is PENDING, and refused before any debit it is FAILED.
 */
export async function pixPayout(em: EntityManager, accountId: string, payoutId: string) {
  const [p] = await em.execute<{ id: string; status: string; channel: 'PIX_OUT' | 'QR_CODE_OUT'; movement_id: string | null; description: string; created_at: string; beneficiary: Record<string, unknown>; pix_key: string; pix_key_type: string; payer_branch: string; payer_account: string; pix_account_id: string }[]>(
    `select p.id, p.status, p.channel, p.movement_id, p.description, ${isoUtc('p.created_at')} as created_at, p.beneficiary, p.pix_key, p.pix_key_type,
            a.agency as payer_branch, a.number as payer_account, a.pix_account_id
       from pix_payout p join account a on a.id = p.account_id
      where p.id = ? and p.account_id = ?`,
    [payoutId, accountId],
  );
  if (!p) return null;
  if (p.movement_id) return payoutOfMovement(em, p.movement_id);
  return {
    id: p.id,
    type: 'DEBIT' as const,
    status: p.status === 'REQUESTED' ? ('PENDING' as const) : ('FAILED' as const),
    source: p.channel,
    description: p.description,
    externalRef: null,
    feeAmount: null,
    reversesMovementId: null,
    createdAt: p.created_at,
    entries: [],
    metadata: {
      date: p.created_at,
      endToEndId: null,
      payer: { branch: p.payer_branch, account: p.payer_account },
      beneficiary: { ...p.beneficiary, pixKey: p.pix_key, pixKeyType: p.pix_key_type },
      pixAccountId: p.pix_account_id,
    },
  };
}

/** Section 4.8: a payment the account sent, by its payoutId (a TEV by its tevId, a Pix by its payoutId); else 404. */
export async function sentPayout(em: EntityManager, account: { id: string; tenantId: string }, payoutId: string) {
  const payout = (await tevPayout(em, account, payoutId)) ?? (await pixPayout(em, account.id, payoutId));
  if (!payout) throw notFound('Payout');
  return payout;
}
