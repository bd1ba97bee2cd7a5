import { randomInt } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Account } from '../accounts/entities.ts';
import { enqueueEvents } from '../events/outbox.ts';
import { feesFor } from '../fees/service.ts';
import { assertSameRequest, requestHash } from '../shared/idempotency.ts';
import { AppError, notFound } from '../shared/errors.ts';
import { newCuid } from '../shared/ids.ts';
import { decodeCursor, isoUtc, pageOf } from '../shared/pagination.ts';
import { insertHandOff, type HandOff } from '../handoff/store.ts';
import { pixChargeStart, type ChargeStatus } from '../../workflows/contracts/pix-charge.ts';
import { buildBrCode } from './brcode.ts';

/**
 * Pix charges (cobranças): lifecycle and reads. A charge is ACTIVE from creation until a payer pays it (PAID) or its
 * expiry passes (EXPIRED, set by the charge's workflow timer). Money moves in `charge-settlement.ts`.
 */

export const MIN_EXPIRY_SECONDS = 1;
export const MAX_EXPIRY_SECONDS = 2_592_000; // 30 days
export const DEFAULT_EXPIRY_SECONDS = 86_400;
export const MAX_TAG_LENGTH = 64;
/** The city every charge's BR Code shows the payer (field 60). */
export const MERCHANT_CITY = 'SAO PAULO';

export interface ChargeRow {
  id: string;
  tenant_id: string;
  account_id: string;
  pix_account_id: string;
  txid: string;
  amount_cents: string;
  tag: string | null;
  br_code: string;
  status: ChargeStatus;
  paid_cents: string;
  refunded_cents: string;
  payer: { name: string; document: string; ispb: string; institution: string; branch: string; account: string } | null;
  end_to_end_id: string | null;
  movement_id: string | null;
  request_hash: string;
  /** ISO 8601 UTC texts (see CHARGE_COLUMNS). */
  expires_at: string;
  created_at: string;
  paid_at: string | null;
  /** created_at with microseconds: the listing cursor. */
  position: string;
}

/** Every column, timestamps already as ISO 8601 UTC text and bigints as text. */
export const CHARGE_COLUMNS = `c.id, c.tenant_id, c.account_id, c.pix_account_id, c.txid, c.amount_cents::text as amount_cents, c.tag, c.br_code,
  c.status, c.paid_cents::text as paid_cents, c.refunded_cents::text as refunded_cents, c.payer, c.end_to_end_id, c.movement_id,
  c.request_hash, ${isoUtc('c.expires_at')} as expires_at, ${isoUtc('c.created_at')} as created_at, ${isoUtc('c.paid_at')} as paid_at,
  ${isoUtc('c.created_at', 'US')} as position`;

/** What an integrator sees of a charge. */
export function chargeView(c: ChargeRow) {
  return {
    chargeId: c.id,
    txid: c.txid,
    brCode: c.br_code,
    amountCents: c.amount_cents,
    tag: c.tag,
    status: c.status,
    expiresAt: c.expires_at,
    createdAt: c.created_at,
    paidAt: c.paid_at,
    paidCents: c.paid_cents,
    refundedCents: c.refunded_cents,
  };
}

const ALPHANUMERIC = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
/** 32 random letters and digits (~190 bits): inside the Banco Central's 26–35, and not guessable from another charge. */
export const newTxid = (): string => Array.from({ length: 32 }, () => ALPHANUMERIC[randomInt(ALPHANUMERIC.length)]).join('');

/**
 * The location of a charge's dynamic BR Code: `<public host and path>/pix/cob/<txid>` without scheme (the payer's app
 * prefixes https://). A dynamic code is the only kind that can name a charge: a static code's txid (field 62-05) holds
 * at most 25 characters and a charge's has 26 to 35, so the txid travels in the location instead.
 */
export function chargeLocation(publicBaseUrl: string, txid: string): string {
  const base = new URL(publicBaseUrl);
  return `${base.host}${base.pathname.replace(/\/+$/, '')}/pix/cob/${txid}`;
}

export interface NewCharge {
  amountCents: bigint;
  expiresInSeconds: number;
  tag: string | null;
}

/**
 * Records a charge and its BR Code, with the hand-off of its expiry workflow in the same transaction. The
 * Idempotency-Key returns the original charge on a retry with the same body; another body under that key is 409.
 */
export async function insertCharge(
  em: EntityManager,
  taskQueue: string,
  account: Account,
  merchantName: string,
  publicBaseUrl: string,
  idempotencyKey: string,
  input: NewCharge,
): Promise<{ charge: ChargeRow; handOff: HandOff | null }> {
  const hash = requestHash([input.amountCents.toString(), input.expiresInSeconds, input.tag]);
  const existing = await chargeByKey(em, account.id, idempotencyKey);
  if (existing) return { charge: sameRequest(existing, hash), handOff: null };

  // A charge the receive fee would swallow could never be paid (the payment refuses it): refuse it now.
  const fee = (await feesFor(em, [account.id])).get(account.id)!.pixIn;
  if (fee >= input.amountCents) throw new AppError(422, 'AMOUNT_BELOW_RECEIVE_FEE', `The amount does not cover the receive fee of ${fee} cents`);

  const txid = newTxid();
  const brCode = buildBrCode({ url: chargeLocation(publicBaseUrl, txid), amountCents: input.amountCents, merchantName, merchantCity: MERCHANT_CITY });
  return em.transactional(async (tx) => {
    const [row] = await tx.execute<ChargeRow[]>(
      `insert into pix_charge (id, tenant_id, account_id, pix_account_id, txid, amount_cents, tag, br_code, status, idempotency_key, request_hash, expires_at)
       values (?, ?, ?, ?, ?, ?, ?, ?, 'ACTIVE', ?, ?, now() + make_interval(secs => ?))
       on conflict (account_id, idempotency_key) do nothing
       returning id`,
      [newCuid(), account.tenantId, account.id, account.pixAccountId, txid, input.amountCents.toString(), input.tag, brCode, idempotencyKey, hash, input.expiresInSeconds],
    );
    // A concurrent request with the same key won the insert: answer as its retry.
    if (!row) return { charge: sameRequest((await chargeByKey(tx, account.id, idempotencyKey))!, hash), handOff: null };
    const charge = (await chargeById(tx, row.id))!;
    const start = pixChargeStart({ chargeId: charge.id, tenantId: charge.tenant_id, accountId: charge.account_id, expiresAt: charge.expires_at });
    return { charge, handOff: await insertHandOff(tx, taskQueue, start) };
  });
}

function sameRequest(charge: ChargeRow, hash: string): ChargeRow {
  assertSameRequest(charge.request_hash, hash);
  return charge;
}

async function chargeByKey(em: EntityManager, accountId: string, idempotencyKey: string): Promise<ChargeRow | undefined> {
  const [row] = await em.execute<ChargeRow[]>(`select ${CHARGE_COLUMNS} from pix_charge c where c.account_id = ? and c.idempotency_key = ?`, [accountId, idempotencyKey]);
  return row;
}

async function chargeById(em: EntityManager, chargeId: string): Promise<ChargeRow | undefined> {
  const [row] = await em.execute<ChargeRow[]>(`select ${CHARGE_COLUMNS} from pix_charge c where c.id = ?`, [chargeId]);
  return row;
}

/** A charge of this account; a charge of any other account is 404, as if it did not exist. */
export async function chargeOfAccount(em: EntityManager, accountId: string, chargeId: string): Promise<ChargeRow> {
  const [row] = await em.execute<ChargeRow[]>(`select ${CHARGE_COLUMNS} from pix_charge c where c.id = ? and c.account_id = ?`, [chargeId, accountId]);
  if (!row) throw notFound('Charge');
  return row;
}

/** One page of the account's charges, newest first, optionally of one status. */
export async function listCharges(em: EntityManager, cursorKey: string, accountId: string, status: ChargeStatus | undefined, limit: number, cursor: string | undefined) {
  // The status is part of the scope: a cursor of one filtered listing is refused by another.
  const scope = `charges:${accountId}:${status ?? ''}`;
  const after = cursor === undefined ? null : decodeCursor(cursorKey, scope, cursor);
  const rows = await em.execute<ChargeRow[]>(
    `select ${CHARGE_COLUMNS} from pix_charge c
      where c.account_id = ? ${status ? 'and c.status = ?' : ''} ${after ? 'and (c.created_at, c.id) < (?::timestamptz, ?)' : ''}
      order by c.created_at desc, c.id desc limit ?`,
    [accountId, ...(status ? [status] : []), ...(after ? [after.at, after.id] : []), limit + 1],
  );
  const { items, pagination } = pageOf(rows, limit, cursorKey, scope);
  return { charges: items.map(chargeView), pagination };
}

/**
 * ACTIVE → EXPIRED with `pix.charge.expired`, in one transaction; a charge that is already PAID or EXPIRED is left as
 * it is (the timer may fire after a payment). Answers the charge's status afterwards.
 */
export async function expireCharge(em: EntityManager, chargeId: string): Promise<ChargeStatus> {
  return em.transactional(async (tx) => {
    const [row] = await tx.execute<Pick<ChargeRow, 'id' | 'tenant_id' | 'account_id' | 'pix_account_id' | 'txid' | 'tag' | 'amount_cents'>[]>(
      `update pix_charge set status = 'EXPIRED' where id = ? and status = 'ACTIVE'
       returning id, tenant_id, account_id, pix_account_id, txid, tag, amount_cents::text as amount_cents`,
      [chargeId],
    );
    if (!row) {
      const [current] = await tx.execute<{ status: ChargeStatus }[]>('select status from pix_charge where id = ?', [chargeId]);
      if (!current) throw new Error(`unknown charge ${chargeId}`);
      return current.status;
    }
    await enqueueEvents(tx, [
      {
        tenantId: row.tenant_id,
        accountId: row.account_id,
        pixAccountId: row.pix_account_id,
        type: 'pix.charge.expired',
        data: { tag: row.tag, txid: row.txid, chargeId: row.id, occurredAt: new Date().toISOString(), amountCents: row.amount_cents },
      },
    ]);
    return 'EXPIRED';
  });
}
