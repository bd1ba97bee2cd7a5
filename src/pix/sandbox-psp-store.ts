import type { EntityManager } from '@mikro-orm/postgresql';

/** The sandbox PSP's own state, `sandbox_psp_payout`: what a real provider would keep on its side of each payout. */

export interface SandboxPayout {
  endToEndId: string;
  outcome: 'POSTED' | 'FAILED' | 'CANCELLED';
  reason: string | null;
  refundCents: bigint;
  refundEndToEndId: string | null;
  /** ISO 8601 UTC. */
  settlesAt: string;
  refundsAt: string | null;
  /** By the database's clock, now. */
  settled: boolean;
  refunded: boolean;
}

interface SandboxPayoutRow {
  end_to_end_id: string;
  outcome: SandboxPayout['outcome'];
  reason: string | null;
  refund_cents: string;
  refund_end_to_end_id: string | null;
  settles_at: Date;
  refunds_at: Date | null;
  settled: boolean;
  refunded: boolean;
}

const toSandboxPayout = (r: SandboxPayoutRow): SandboxPayout => ({
  endToEndId: r.end_to_end_id,
  outcome: r.outcome,
  reason: r.reason,
  refundCents: BigInt(r.refund_cents),
  refundEndToEndId: r.refund_end_to_end_id,
  settlesAt: new Date(r.settles_at).toISOString(),
  refundsAt: r.refunds_at ? new Date(r.refunds_at).toISOString() : null,
  settled: r.settled,
  refunded: r.refunded,
});

export interface NewSandboxPayout {
  payoutId: string;
  amountCents: bigint;
  endToEndId: string;
  outcome: SandboxPayout['outcome'];
  reason: string | null;
  /** Settles this long from now; a refund, if any, as long again after that. */
  settleMs: number;
  refund: { cents: bigint; endToEndId: string } | null;
}

/** Records a submitted payout; false when it was submitted already (a retried submission changes nothing). */
export async function insertSandboxPayout(em: EntityManager, p: NewSandboxPayout): Promise<boolean> {
  const inserted = await em.execute<{ payout_id: string }[]>(
    `insert into sandbox_psp_payout (payout_id, amount_cents, end_to_end_id, outcome, reason, refund_cents, refund_end_to_end_id, settles_at, refunds_at)
     values (?, ?, ?, ?, ?, ?, ?, now() + ? * interval '1 millisecond', case when ?::bigint > 0 then now() + 2 * ? * interval '1 millisecond' end)
     on conflict (payout_id) do nothing returning payout_id`,
    [
      p.payoutId, p.amountCents.toString(), p.endToEndId, p.outcome, p.reason, (p.refund?.cents ?? 0n).toString(), p.refund?.endToEndId ?? null,
      p.settleMs, (p.refund?.cents ?? 0n).toString(), p.settleMs,
    ],
  );
  return inserted.length > 0;
}

/** The receiving side refused the payout: it fails when it would have settled. */
export async function failSandboxPayout(em: EntityManager, payoutId: string, reason: string): Promise<void> {
  await em.execute(`update sandbox_psp_payout set outcome = 'FAILED', reason = ? where payout_id = ?`, [reason, payoutId]);
}

export async function findSandboxPayout(em: EntityManager, payoutId: string): Promise<SandboxPayout | null> {
  const [row] = await em.execute<SandboxPayoutRow[]>(
    `select end_to_end_id, outcome, reason, refund_cents::text as refund_cents, refund_end_to_end_id, settles_at, refunds_at,
            settles_at <= now() as settled, coalesce(refunds_at <= now(), false) as refunded
       from sandbox_psp_payout where payout_id = ?`,
    [payoutId],
  );
  return row ? toSandboxPayout(row) : null;
}

/** A return the sandbox was given; `payoutId` is the payout whose Pix it returns, when that Pix left the platform. */
export interface SandboxReturn {
  payoutId: string | null;
  /** ISO 8601 UTC. */
  returnedAt: string;
}

/**
 * Records a return, finding the payout that sent the returned Pix by the Pix's end-to-end id; null when this return
 * was recorded already (a retried send changes nothing).
 */
export async function insertSandboxReturn(em: EntityManager, r: { endToEndId: string; originalEndToEndId: string; amountCents: bigint }): Promise<SandboxReturn | null> {
  const [row] = await em.execute<{ payout_id: string | null; returned_at: Date }[]>(
    `insert into sandbox_psp_return (end_to_end_id, original_end_to_end_id, payout_id, amount_cents)
     values (?, ?, (select payout_id from sandbox_psp_payout where end_to_end_id = ? and outcome = 'POSTED'), ?)
     on conflict (end_to_end_id) do nothing returning payout_id, returned_at`,
    [r.endToEndId, r.originalEndToEndId, r.originalEndToEndId, r.amountCents.toString()],
  );
  return row ? { payoutId: row.payout_id, returnedAt: new Date(row.returned_at).toISOString() } : null;
}

/** Only a settled Pix is returned: a payout whose settle delay has not passed yet settles now. */
export async function settleSandboxPayoutNow(em: EntityManager, payoutId: string): Promise<{ endToEndId: string; settledAt: string }> {
  const [row] = await em.execute<{ end_to_end_id: string; settles_at: Date }[]>(
    'update sandbox_psp_payout set settles_at = least(settles_at, now()) where payout_id = ? returning end_to_end_id, settles_at',
    [payoutId],
  );
  return { endToEndId: row!.end_to_end_id, settledAt: new Date(row!.settles_at).toISOString() };
}
