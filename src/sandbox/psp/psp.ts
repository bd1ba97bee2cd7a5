import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import { pixEndToEndId } from '../../pix/end-to-end.ts';
import { CHARGE_REFUSALS, outcomeOfCents, SANDBOX_PSP } from './network.ts';
import {
  decidePayout,
  findPayout,
  findReturn,
  firstReturn,
  inTransaction,
  insertNotification,
  insertPayout,
  insertReturn,
  lockPayoutByEndToEndId,
  returnedCents,
  settleNow,
  takeControl,
  type NotificationType,
  type PspPayout,
  type PspReturn,
  type Sql,
} from './store.ts';

/**
 * The sandbox PSP's rules: payouts (their outcome by cents, or, for a payout to an account of the platform itself, the
 * platform's answer to the Pix), returns, and the notifications each owes the platform, recorded in the transaction
 * that decides them and sent later by the notifier.
 */

export interface PspContext {
  pool: pg.Pool;
  /** Where the platform this PSP serves takes its notifications; it also names this PSP's share of the tables. */
  platformUrl: string;
  /** The platform's ISPB: a payout to it is a Pix the platform receives. */
  platformIspb: string;
  settleMs: number;
}

export class PspError extends Error {
  readonly status: number;
  readonly code: string;
  readonly details: { path: string; message: string }[] | undefined;
  constructor(status: number, code: string, message: string, details?: { path: string; message: string }[]) {
    super(message);
    this.status = status;
    this.code = code;
    this.details = details;
  }
}

export interface Party {
  name: string;
  document: string;
  ispb: string;
  institution: string;
  branch: string;
  account: string;
}

export interface PayoutSubmission {
  payoutId: string;
  amountCents: bigint;
  receiver: { ispb: string; branch: string; account: string };
  /** A payment of a dynamic QR Code: the txid of the charge it pays. */
  txid: string | null;
  payer: Party;
}

/** A payout as the PSP's API shows it: the platform's `ProviderPayoutState`, with its id. */
export type PayoutState =
  | { payoutId: string; state: 'PROCESSING' }
  | { payoutId: string; state: 'POSTED'; endToEndId: string; settledAt: string; refund: { endToEndId: string; amountCents: string; refundedAt: string } | null }
  | { payoutId: string; state: 'FAILED' | 'CANCELLED'; endToEndId: string; reason: string };

const notificationId = () => `msg_${randomUUID().replaceAll('-', '')}`;
/** A devolução's id: like an end-to-end id, with `D` and the ISPB of the institution returning the money. */
const returnEndToEndId = (ispb: string) => `D${pixEndToEndId(ispb).slice(1)}`;

/**
 * Records a notification for the platform, due at `dueAt`. A payout's notifications go through the sandbox controls
 * (dropped, or delayed); a `pix.received` is the Pix itself, not a report the platform could ask for, so it never is.
 */
async function notify(db: Sql, ctx: PspContext, type: NotificationType, payoutId: string | null, data: Record<string, unknown>, dueAt: string): Promise<void> {
  const control = type === 'pix.received' ? { drop: false, delayMs: 0 } : await takeControl(db, ctx.platformUrl);
  const due = new Date(Date.parse(dueAt) + control.delayMs).toISOString();
  await insertNotification(db, ctx.platformUrl, { id: notificationId(), type, payoutId, body: JSON.stringify({ type, data }), dueAt: due, status: control.drop ? 'DROPPED' : 'PENDING' });
}

async function notifyOutcome(db: Sql, ctx: PspContext, p: PspPayout): Promise<void> {
  if (p.outcome === 'POSTED') {
    await notify(db, ctx, 'payout.settled', p.payoutId, { payoutId: p.payoutId, endToEndId: p.endToEndId, settledAt: p.settlesAt }, p.settlesAt);
  } else if (p.outcome === 'FAILED' || p.outcome === 'CANCELLED') {
    const type = p.outcome === 'FAILED' ? 'payout.failed' : 'payout.cancelled';
    await notify(db, ctx, type, p.payoutId, { payoutId: p.payoutId, endToEndId: p.endToEndId, reason: p.reason }, p.settlesAt);
  }
}

async function notifyReturn(db: Sql, ctx: PspContext, p: PspPayout, r: PspReturn): Promise<void> {
  const data = { payoutId: p.payoutId, endToEndId: p.endToEndId, returnEndToEndId: r.endToEndId, amountCents: r.amountCents.toString(), returnedAt: r.returnedAt, settledAt: p.settlesAt };
  await notify(db, ctx, 'payout.returned', p.payoutId, data, r.returnedAt);
}

/**
 * Takes a payout, once per payoutId: submitted again, the payout as it stands (`created` false); the same id with
 * another amount is refused. A payout to an account of the platform is delivered to it as `pix.received` at once and
 * waits for its answer; any other settles by its cents after the settle delay.
 */
export async function submitPayout(ctx: PspContext, s: PayoutSubmission): Promise<{ created: boolean; payout: PayoutState }> {
  const created = await inTransaction(ctx.pool, async (tx) => {
    const toPlatform = s.receiver.ispb === ctx.platformIspb;
    const rule = outcomeOfCents(s.amountCents);
    const payout = await insertPayout(tx, {
      payoutId: s.payoutId,
      amountCents: s.amountCents,
      endToEndId: pixEndToEndId(s.payer.ispb),
      outcome: toPlatform ? 'PENDING' : rule.outcome,
      reason: toPlatform ? null : rule.reason,
      receiver: s.receiver,
      txid: s.txid,
      settleMs: ctx.settleMs,
    });
    if (!payout) return false;
    if (toPlatform) {
      const data = {
        endToEndId: payout.endToEndId,
        amountCents: s.amountCents.toString(),
        receiver: { branch: s.receiver.branch, account: s.receiver.account },
        payer: s.payer,
        ...(s.txid ? { txid: s.txid } : {}),
      };
      await notify(tx, ctx, 'pix.received', payout.payoutId, data, new Date().toISOString());
      return true;
    }
    await notifyOutcome(tx, ctx, payout);
    if (rule.returnedCents > 0n) {
      const scheduled = { endToEndId: returnEndToEndId(SANDBOX_PSP.ispb), originalEndToEndId: payout.endToEndId, payoutId: payout.payoutId, amountCents: rule.returnedCents };
      const returned = await insertReturn(tx, scheduled, ctx.settleMs * 2);
      await notifyReturn(tx, ctx, payout, returned!);
    }
    return true;
  });
  // Taken now: it settles later, so it is PROCESSING (a payout is submitted once per payment, and answered without
  // reading it back). Submitted before: as it stands, unless the amount says it is another payout.
  if (created) return { created, payout: { payoutId: s.payoutId, state: 'PROCESSING' } };
  const known = await findPayout(ctx.pool, s.payoutId);
  if (known!.amountCents !== s.amountCents) throw new PspError(409, 'PAYOUT_ID_REUSED', `Payout ${s.payoutId} was submitted with another amount`);
  return { created, payout: await readPayout(ctx, s.payoutId) };
}

/** The payout's state now; a payout not yet settled (or still waiting for the platform's answer) is PROCESSING. */
export async function readPayout(ctx: PspContext, payoutId: string): Promise<PayoutState> {
  const p = await findPayout(ctx.pool, payoutId);
  if (!p) throw new PspError(404, 'PAYOUT_NOT_FOUND', `No payout ${payoutId} was submitted`);
  if (p.outcome === 'PENDING' || !p.settled) return { payoutId, state: 'PROCESSING' };
  if (p.outcome !== 'POSTED') return { payoutId, state: p.outcome, endToEndId: p.endToEndId, reason: p.reason ?? p.outcome };
  const r = await firstReturn(ctx.pool, payoutId);
  const refund = r ? { endToEndId: r.endToEndId, amountCents: r.amountCents.toString(), refundedAt: r.returnedAt } : null;
  return { payoutId, state: 'POSTED', endToEndId: p.endToEndId, settledAt: p.settlesAt, refund };
}

/**
 * The platform answered the `pix.received` of a payout to it: taken, the payout settles (at its settle time) and
 * `payout.settled` follows; refused with `code`, it fails with that refusal's reason and `payout.failed` follows.
 */
export async function platformAnswered(tx: Sql, ctx: PspContext, payoutId: string, answer: { accepted: true } | { accepted: false; code: string; message: string }): Promise<void> {
  const decided = answer.accepted
    ? await decidePayout(tx, payoutId, 'POSTED', null)
    : await decidePayout(tx, payoutId, 'FAILED', CHARGE_REFUSALS[answer.code] ?? answer.message);
  if (decided) await notifyOutcome(tx, ctx, decided);
}

export interface ReturnRequest {
  endToEndId: string;
  originalEndToEndId: string;
  amountCents: bigint;
}

const returnView = (r: PspReturn) => ({ endToEndId: r.endToEndId, originalEndToEndId: r.originalEndToEndId, amountCents: r.amountCents.toString(), returnedAt: r.returnedAt });
export type ReturnView = ReturnType<typeof returnView>;

/**
 * Adds a return to a settled payout of this PSP, within what is left of its amount, and owes the platform
 * `payout.returned`. A payout not settled yet settles now: only a settled Pix comes back.
 */
async function returnPayout(tx: Sql, ctx: PspContext, payout: PspPayout, r: ReturnRequest): Promise<PspReturn> {
  if (payout.outcome !== 'POSTED') throw new PspError(422, 'PAYOUT_NOT_RETURNABLE', `Payout ${payout.payoutId} is ${payout.outcome === 'PENDING' ? 'not settled yet' : payout.outcome}: only a settled payout is returned`);
  const left = payout.amountCents - (await returnedCents(tx, payout.payoutId));
  if (r.amountCents > left) throw new PspError(422, 'RETURN_EXCEEDS_PAYOUT', `At most ${left} cents of this Pix can still be returned`);
  const settled = await settleNow(tx, payout.payoutId);
  const recorded = (await insertReturn(tx, { ...r, payoutId: payout.payoutId }))!;
  await notifyReturn(tx, ctx, settled, recorded);
  return recorded;
}

/**
 * A devolução the platform sends (the refund of a charge it received), once per end-to-end id. When the Pix it returns
 * was a payout of this PSP (a holder of the platform paid the charge), the payer's side is the platform again, told
 * `payout.returned`; a Pix from anywhere else goes back beyond the sandbox.
 */
export async function sendReturn(ctx: PspContext, r: ReturnRequest): Promise<{ created: boolean; sent: ReturnView }> {
  return inTransaction(ctx.pool, async (tx) => {
    const known = await findReturn(tx, r.endToEndId);
    if (known) {
      if (known.originalEndToEndId !== r.originalEndToEndId || known.amountCents !== r.amountCents) {
        throw new PspError(409, 'RETURN_ID_REUSED', `Return ${r.endToEndId} was sent with another original or amount`);
      }
      return { created: false, sent: returnView(known) };
    }
    const payout = await lockPayoutByEndToEndId(tx, r.originalEndToEndId);
    const recorded = payout ? await returnPayout(tx, ctx, payout, r) : (await insertReturn(tx, { ...r, payoutId: null }))!;
    return { created: true, sent: returnView(recorded) };
  });
}

/** Sandbox control: the receiver of a settled payout returns part or all of it now. */
export async function returnSettledPayout(ctx: PspContext, r: { endToEndId: string; amountCents: bigint }): Promise<ReturnView & { payoutId: string }> {
  return inTransaction(ctx.pool, async (tx) => {
    const payout = await lockPayoutByEndToEndId(tx, r.endToEndId);
    if (!payout) throw new PspError(404, 'PAYOUT_NOT_FOUND', `No payout has the end-to-end id ${r.endToEndId}`);
    if (payout.outcome === 'POSTED' && !payout.settled) throw new PspError(422, 'PAYOUT_NOT_RETURNABLE', `Payout ${payout.payoutId} settles at ${payout.settlesAt}: return it after that`);
    const recorded = await returnPayout(tx, ctx, payout, { endToEndId: returnEndToEndId(payout.receiver?.ispb ?? SANDBOX_PSP.ispb), originalEndToEndId: payout.endToEndId, amountCents: r.amountCents });
    return { ...returnView(recorded), payoutId: payout.payoutId };
  });
}
