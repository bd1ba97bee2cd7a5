import type { EntityManager } from '@mikro-orm/postgresql';
import { defaultTevDescription, tevBeneficiary } from '../transfers/metadata.ts';
import { isoUtc } from '../shared/pagination.ts';
import { entriesByMovement, MOVEMENT_COLUMNS, type MovementRow } from './movements.ts';

/** Section 2.5 of a payout whose debit was posted, for any channel: everything comes from its movement. */
export async function payoutOfMovement(em: EntityManager, movementId: string) {
  const [m] = await em.execute<MovementRow[]>(`select ${MOVEMENT_COLUMNS} from movement m where m.id = ?`, [movementId]);
  if (!m) throw new Error(`unknown movement ${movementId}`);
  // Money returned for it (failure, cancellation, refund) shows as its REVERSAL entries.
  const returns = await em.execute<{ id: string }[]>('select id from movement where reverses_movement_id = ? and account_id = (select account_id from movement where id = ?) order by created_at', [m.id, m.id]);
  const byMovement = await entriesByMovement(em, [m.id, ...returns.map((r) => r.id)]);
  const entries = [m.id, ...returns.map((r) => r.id)].flatMap((id) => byMovement.get(id) ?? []);
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

interface TevPayoutRow {
  id: string;
  status: 'PROCESSING' | 'DONE' | 'FAILED';
  description: string | null;
  external_ref: string | null;
  source_movement_id: string | null;
  created_at: string;
  payer_branch: string;
  payer_account: string;
  beneficiary_branch: string;
  beneficiary_account: string;
  beneficiary_name: string | null;
  beneficiary_document: string | null;
}

/**
 * A TEV read as a payout of the account that sent it (its payoutId is the tevId); null when the account did not
 * send it, so the destination side and everyone else get the same 404.
 */
export async function tevPayout(em: EntityManager, accountId: string, tevId: string) {
  const [t] = await em.execute<TevPayoutRow[]>(
    `select t.id, t.status, t.description, t.external_ref, t.source_movement_id, ${isoUtc('t.created_at')} as created_at,
            s.agency as payer_branch, s.number as payer_account, d.agency as beneficiary_branch, d.number as beneficiary_account,
            h.name as beneficiary_name, h.document as beneficiary_document
       from tev_transfer t
       join account s on s.id = t.source_account_id
       join account d on d.id = t.destination_account_id
       left join holder h on h.id = d.holder_id
      where t.id = ? and t.source_account_id = ?`,
    [tevId, accountId],
  );
  if (!t) return null;
  if (t.source_movement_id) return payoutOfMovement(em, t.source_movement_id);
  // Refused (FAILED) or not settled yet (PROCESSING): nothing was posted, so the transfer answers for itself, with
  // the counterparts a posted TEV's metadata carries (tevMetadata) but no endToEndId and no paymentDate, which only
  // settlement gives. The description is the one the posting stores when the sender gave none.
  return {
    id: t.id,
    type: 'DEBIT' as const,
    status: t.status === 'FAILED' ? ('FAILED' as const) : ('PROCESSING' as const),
    source: 'TEF_OUT' as const,
    description: t.description ?? defaultTevDescription(t.beneficiary_name),
    externalRef: t.external_ref,
    feeAmount: null,
    reversesMovementId: null,
    createdAt: t.created_at,
    entries: [],
    metadata: {
      date: t.created_at,
      endToEndId: null,
      payer: { branch: t.payer_branch, account: t.payer_account },
      beneficiary: tevBeneficiary({ holderName: t.beneficiary_name, agency: t.beneficiary_branch, number: t.beneficiary_account, holderDocument: t.beneficiary_document }),
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
