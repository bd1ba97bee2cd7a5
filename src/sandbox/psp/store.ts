import pg from 'pg';

/**
 * Every SQL statement of the sandbox PSP, on its own tables only (`sandbox_psp_*`): what a real provider keeps on its
 * side. It never reads or writes a table of the platform.
 */

export type Sql = pg.Pool | pg.PoolClient;

/** The names of the statements below, each prepared once per connection: see `run`. */
const statementNames = new Map<string, string>();

/**
 * Runs one of the statements below as a named prepared statement: each connection parses and plans it once. Sent
 * unnamed, the provider's handful of statements per payout were planned again at every call, about a fifth of a ms of
 * the database's CPU per payout while a burst of payouts drained (bench/README.md).
 */
async function run<R extends pg.QueryResultRow = pg.QueryResultRow>(db: Sql, text: string, values: unknown[]): Promise<pg.QueryResult<R>> {
  let name = statementNames.get(text);
  if (name === undefined) {
    name = `sandbox_psp_${statementNames.size + 1}`;
    statementNames.set(text, name);
  }
  return db.query<R>({ name, text, values });
}

/** Runs `work` in one transaction on a connection of its own. */
export async function inTransaction<T>(pool: pg.Pool, work: (tx: pg.PoolClient) => Promise<T>): Promise<T> {
  const tx = await pool.connect();
  try {
    await tx.query('begin');
    const result = await work(tx);
    await tx.query('commit');
    return result;
  } catch (err) {
    await tx.query('rollback').catch(() => undefined);
    throw err;
  } finally {
    tx.release();
  }
}

export type PayoutOutcome = 'PENDING' | 'POSTED' | 'FAILED' | 'CANCELLED';

export interface PspPayout {
  payoutId: string;
  amountCents: bigint;
  endToEndId: string;
  /** PENDING: the receiving institution (the platform itself) has not taken or refused the Pix yet. */
  outcome: PayoutOutcome;
  reason: string | null;
  receiver: { ispb: string; branch: string; account: string } | null;
  txid: string | null;
  /** ISO 8601 UTC. */
  settlesAt: string;
  /** By the database's clock, now. */
  settled: boolean;
}

const PAYOUT_COLUMNS = `payout_id, amount_cents::text as amount_cents, end_to_end_id, outcome, reason, receiver_ispb, receiver_branch,
  receiver_account, txid, settles_at, settles_at <= now() as settled`;

interface PayoutRow {
  payout_id: string;
  amount_cents: string;
  end_to_end_id: string;
  outcome: PayoutOutcome;
  reason: string | null;
  receiver_ispb: string | null;
  receiver_branch: string | null;
  receiver_account: string | null;
  txid: string | null;
  settles_at: Date;
  settled: boolean;
}

const toPayout = (r: PayoutRow): PspPayout => ({
  payoutId: r.payout_id,
  amountCents: BigInt(r.amount_cents),
  endToEndId: r.end_to_end_id,
  outcome: r.outcome,
  reason: r.reason,
  receiver: r.receiver_ispb ? { ispb: r.receiver_ispb, branch: r.receiver_branch!, account: r.receiver_account! } : null,
  txid: r.txid,
  settlesAt: r.settles_at.toISOString(),
  settled: r.settled,
});

export interface NewPayout {
  payoutId: string;
  amountCents: bigint;
  endToEndId: string;
  outcome: PayoutOutcome;
  reason: string | null;
  receiver: { ispb: string; branch: string; account: string };
  txid: string | null;
  /** Settles this long from now. */
  settleMs: number;
}

/** Records a submitted payout; null when that payoutId was submitted already (a retried submission changes nothing). */
export async function insertPayout(db: Sql, p: NewPayout): Promise<PspPayout | null> {
  const { rows } = await run<PayoutRow>(
    db,
    `insert into sandbox_psp_payout (payout_id, amount_cents, end_to_end_id, outcome, reason, receiver_ispb, receiver_branch, receiver_account, txid, settles_at)
     values ($1, $2, $3, $4, $5, $6, $7, $8, $9, now() + $10 * interval '1 millisecond')
     on conflict (payout_id) do nothing returning ${PAYOUT_COLUMNS}`,
    [p.payoutId, p.amountCents.toString(), p.endToEndId, p.outcome, p.reason, p.receiver.ispb, p.receiver.branch, p.receiver.account, p.txid, p.settleMs],
  );
  return rows[0] ? toPayout(rows[0]) : null;
}

export async function findPayout(db: Sql, payoutId: string): Promise<PspPayout | null> {
  const { rows } = await run<PayoutRow>(db, `select ${PAYOUT_COLUMNS} from sandbox_psp_payout where payout_id = $1`, [payoutId]);
  return rows[0] ? toPayout(rows[0]) : null;
}

/** The payout that sent a Pix, by its end-to-end id, locked so its returns are added up one at a time. */
export async function lockPayoutByEndToEndId(db: Sql, endToEndId: string): Promise<PspPayout | null> {
  const { rows } = await run<PayoutRow>(db, `select ${PAYOUT_COLUMNS} from sandbox_psp_payout where end_to_end_id = $1 for update`, [endToEndId]);
  return rows[0] ? toPayout(rows[0]) : null;
}

/**
 * The receiving institution answered a PENDING payout: it is POSTED or FAILED, at its settle time or now if that has
 * passed. Null when it was decided already (an answer received twice decides once).
 */
export async function decidePayout(db: Sql, payoutId: string, outcome: 'POSTED' | 'FAILED', reason: string | null): Promise<PspPayout | null> {
  const { rows } = await run<PayoutRow>(
    db,
    `update sandbox_psp_payout set outcome = $2, reason = $3, settles_at = greatest(settles_at, now())
      where payout_id = $1 and outcome = 'PENDING' returning ${PAYOUT_COLUMNS}`,
    [payoutId, outcome, reason],
  );
  return rows[0] ? toPayout(rows[0]) : null;
}

/** Only a settled Pix is returned: a payout whose settle delay has not passed yet settles now. */
export async function settleNow(db: Sql, payoutId: string): Promise<PspPayout> {
  const { rows } = await run<PayoutRow>(
    db,
    `update sandbox_psp_payout set settles_at = least(settles_at, now()) where payout_id = $1 returning ${PAYOUT_COLUMNS}`,
    [payoutId],
  );
  return toPayout(rows[0]!);
}

export interface PspReturn {
  endToEndId: string;
  originalEndToEndId: string;
  /** The payout whose Pix it returns, when that payout went through this PSP; null for any other Pix. */
  payoutId: string | null;
  amountCents: bigint;
  /** ISO 8601 UTC: when it is (or was, or will be) returned. */
  returnedAt: string;
}

interface ReturnRow {
  end_to_end_id: string;
  original_end_to_end_id: string;
  payout_id: string | null;
  amount_cents: string;
  returned_at: Date;
}

const RETURN_COLUMNS = 'end_to_end_id, original_end_to_end_id, payout_id, amount_cents::text as amount_cents, returned_at';

const toReturn = (r: ReturnRow): PspReturn => ({
  endToEndId: r.end_to_end_id,
  originalEndToEndId: r.original_end_to_end_id,
  payoutId: r.payout_id,
  amountCents: BigInt(r.amount_cents),
  returnedAt: r.returned_at.toISOString(),
});

/** Records a return, now or `afterMs` from now; null when its end-to-end id was recorded already. */
export async function insertReturn(db: Sql, r: Omit<PspReturn, 'returnedAt'>, afterMs = 0): Promise<PspReturn | null> {
  const { rows } = await run<ReturnRow>(
    db,
    `insert into sandbox_psp_return (end_to_end_id, original_end_to_end_id, payout_id, amount_cents, returned_at)
     values ($1, $2, $3, $4, now() + $5 * interval '1 millisecond')
     on conflict (end_to_end_id) do nothing returning ${RETURN_COLUMNS}`,
    [r.endToEndId, r.originalEndToEndId, r.payoutId, r.amountCents.toString(), afterMs],
  );
  return rows[0] ? toReturn(rows[0]) : null;
}

export async function findReturn(db: Sql, endToEndId: string): Promise<PspReturn | null> {
  const { rows } = await run<ReturnRow>(db, `select ${RETURN_COLUMNS} from sandbox_psp_return where end_to_end_id = $1`, [endToEndId]);
  return rows[0] ? toReturn(rows[0]) : null;
}

/** What the returns of a payout add up to, the scheduled ones included. */
export async function returnedCents(db: Sql, payoutId: string): Promise<bigint> {
  const { rows } = await run<{ cents: string }>(db, 'select coalesce(sum(amount_cents), 0)::text as cents from sandbox_psp_return where payout_id = $1', [payoutId]);
  return BigInt(rows[0]!.cents);
}

/** The first return of a payout that has happened by now, the one its state shows; null before any. */
export async function firstReturn(db: Sql, payoutId: string): Promise<PspReturn | null> {
  const { rows } = await run<ReturnRow>(
    db,
    `select ${RETURN_COLUMNS} from sandbox_psp_return where payout_id = $1 and returned_at <= now() order by returned_at, end_to_end_id limit 1`,
    [payoutId],
  );
  return rows[0] ? toReturn(rows[0]) : null;
}

export type NotificationType = 'payout.settled' | 'payout.failed' | 'payout.cancelled' | 'payout.returned' | 'pix.received';
export type NotificationStatus = 'PENDING' | 'DELIVERED' | 'REFUSED' | 'DROPPED';

export interface NewNotification {
  id: string;
  type: NotificationType;
  payoutId: string | null;
  body: string;
  /** When it becomes due, ISO 8601; it is sent then or at once if that has passed. */
  dueAt: string;
  status: 'PENDING' | 'DROPPED';
}

export async function insertNotification(db: Sql, platformUrl: string, n: NewNotification): Promise<void> {
  await run(
    db,
    `insert into sandbox_psp_notification (id, platform_url, type, payout_id, body, status, due_at, finished_at)
     values ($1, $2, $3, $4, $5, $6, $7, case when $6 = 'DROPPED' then now() end)`,
    [n.id, platformUrl, n.type, n.payoutId, n.body, n.status, n.dueAt],
  );
}

export interface ClaimedNotification {
  id: string;
  type: NotificationType;
  payoutId: string | null;
  body: string;
  attempts: number;
}

/**
 * Claims the due notifications of one platform for `leaseMs`: a sender that dies mid-send leaves them to be claimed
 * again when the lease ends; two senders never claim the same row (skip locked).
 */
export async function claimDueNotifications(db: Sql, platformUrl: string, limit: number, leaseMs: number): Promise<ClaimedNotification[]> {
  const { rows } = await run<{ id: string; type: NotificationType; payout_id: string | null; body: string; attempts: number }>(
    db,
    `update sandbox_psp_notification set claimed_until = now() + $3 * interval '1 millisecond', attempts = attempts + 1
      where id in (
        select id from sandbox_psp_notification
         where platform_url = $1 and status = 'PENDING' and due_at <= now() and (claimed_until is null or claimed_until < now())
         order by due_at limit $2 for update skip locked)
      returning id, type, payout_id, body, attempts`,
    [platformUrl, limit, leaseMs],
  );
  return rows.map((r) => ({ id: r.id, type: r.type, payoutId: r.payout_id, body: r.body, attempts: r.attempts }));
}

/** The platform answered for good: delivered (2xx) or refused (a 4xx that will never change). */
export async function finishNotification(db: Sql, id: string, status: 'DELIVERED' | 'REFUSED', httpStatus: number, error: string | null): Promise<void> {
  await run(
    db,
    `update sandbox_psp_notification set status = $2, last_status = $3, last_error = $4, finished_at = now(), claimed_until = null where id = $1`,
    [id, status, httpStatus, error],
  );
}

/** Not delivered this time: tried again `retryMs` from now, under the same id. */
export async function retryNotification(db: Sql, id: string, httpStatus: number | null, error: string, retryMs: number): Promise<void> {
  await run(
    db,
    `update sandbox_psp_notification set due_at = now() + $4 * interval '1 millisecond', last_status = $2, last_error = $3, claimed_until = null where id = $1`,
    [id, httpStatus, error, retryMs],
  );
}

export interface NotificationView {
  id: string;
  type: NotificationType;
  payoutId: string | null;
  status: NotificationStatus;
  attempts: number;
  dueAt: string;
  lastStatus: number | null;
  lastError: string | null;
  body: unknown;
}

export async function listNotifications(db: Sql, platformUrl: string, payoutId: string | null, limit: number): Promise<NotificationView[]> {
  const { rows } = await run<{
    id: string;
    type: NotificationType;
    payout_id: string | null;
    status: NotificationStatus;
    attempts: number;
    due_at: Date;
    last_status: number | null;
    last_error: string | null;
    body: string;
  }>(
    db,
    `select id, type, payout_id, status, attempts, due_at, last_status, last_error, body from sandbox_psp_notification
      where platform_url = $1 and ($2::text is null or payout_id = $2) order by created_at desc, id limit $3`,
    [platformUrl, payoutId, limit],
  );
  return rows.map((r) => ({
    id: r.id,
    type: r.type,
    payoutId: r.payout_id,
    status: r.status,
    attempts: r.attempts,
    dueAt: r.due_at.toISOString(),
    lastStatus: r.last_status,
    lastError: r.last_error,
    body: JSON.parse(r.body) as unknown,
  }));
}

export interface Controls {
  dropNext: number;
  delayNext: number;
  delayMs: number;
}

/** Sets some of the sandbox controls of one platform's notifications; answers all of them as they now stand. */
export async function setControls(db: Sql, platformUrl: string, c: Partial<Controls>): Promise<Controls> {
  const { rows } = await run<{ drop_next: number; delay_next: number; delay_ms: number }>(
    db,
    `insert into sandbox_psp_control (platform_url, drop_next, delay_next, delay_ms) values ($1, coalesce($2, 0), coalesce($3, 0), coalesce($4, 0))
     on conflict (platform_url) do update set drop_next = coalesce($2, sandbox_psp_control.drop_next),
       delay_next = coalesce($3, sandbox_psp_control.delay_next), delay_ms = coalesce($4, sandbox_psp_control.delay_ms)
     returning drop_next, delay_next, delay_ms`,
    [platformUrl, c.dropNext ?? null, c.delayNext ?? null, c.delayMs ?? null],
  );
  return { dropNext: rows[0]!.drop_next, delayNext: rows[0]!.delay_next, delayMs: rows[0]!.delay_ms };
}

/**
 * Takes one use of the controls for a new notification, in the caller's transaction: dropped if a drop is left,
 * otherwise delayed by `delayMs` if a delay is left (the row lock makes concurrent takers count down one by one).
 */
export async function takeControl(db: Sql, platformUrl: string): Promise<{ drop: boolean; delayMs: number }> {
  // One statement: with no control set (nearly always) it finds no row and writes nothing.
  const { rows } = await run<{ dropped: boolean; delay_ms: number }>(
    db,
    `with taken as (
       select drop_next > 0 as dropped, delay_ms from sandbox_psp_control
        where platform_url = $1 and (drop_next > 0 or delay_next > 0) for update)
     update sandbox_psp_control c
        set drop_next = c.drop_next - taken.dropped::int, delay_next = c.delay_next - (not taken.dropped)::int
       from taken where c.platform_url = $1
     returning taken.dropped, taken.delay_ms`,
    [platformUrl],
  );
  const taken = rows[0];
  return taken ? { drop: taken.dropped, delayMs: taken.dropped ? 0 : taken.delay_ms } : { drop: false, delayMs: 0 };
}
