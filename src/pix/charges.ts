import { randomInt } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Client } from '@temporalio/client';
import type { Account } from '../accounts/entities.ts';
import { enqueueEvents } from '../events/outbox.ts';
import { feesFor } from '../fees/service.ts';
import { assertSameRequest, requestHash } from '../shared/idempotency.ts';
import { DomainError, notFound, refusals } from '../shared/errors.ts';
import { newCuid } from '../shared/ids.ts';
import { decodeCursor, pageOf } from '../shared/pagination.ts';
import type { Config } from '../config.ts';
import { dispatchHandOff } from '../handoff/dispatch.ts';
import { insertHandOff, type HandOff } from '../handoff/store.ts';
import { pixChargeStart, type ChargeStatus } from '../../workflows/contracts/pix-charge.ts';
import { buildBrCode } from './brcode.ts';
import { expireActiveCharge, findCharge, findChargeByKey, findChargeOfAccount, insertCharge, listChargesOfAccount, type PixCharge } from './charge-store.ts';
import { chargeLocation } from './public-urls.ts';

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

/** What an integrator sees of a charge. */
export function chargeView(c: PixCharge) {
  return {
    chargeId: c.id,
    txid: c.txid,
    brCode: c.brCode,
    amountCents: c.amountCents.toString(),
    tag: c.tag,
    status: c.status,
    expiresAt: c.expiresAt,
    createdAt: c.createdAt,
    paidAt: c.paidAt,
    paidCents: c.paidCents.toString(),
    refundedCents: c.refundedCents.toString(),
  };
}

const ALPHANUMERIC = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
/** 32 random letters and digits (~190 bits): inside the Banco Central's 26–35, and not guessable from another charge. */
export const newTxid = (): string => Array.from({ length: 32 }, () => ALPHANUMERIC[randomInt(ALPHANUMERIC.length)]).join('');

export interface ChargeRequest {
  amountCents: bigint;
  expiresInSeconds: number;
  tag: string | null;
}

/**
 * Records a charge and its BR Code, with the hand-off of its expiry workflow in the same transaction. The
 * Idempotency-Key returns the original charge on a retry with the same body; another body under that key is 409.
 */
export async function createCharge(
  em: EntityManager,
  taskQueue: string,
  account: Account,
  merchantName: string,
  publicBaseUrl: string,
  idempotencyKey: string,
  input: ChargeRequest,
): Promise<{ charge: PixCharge; handOff: HandOff | null }> {
  const hash = requestHash([input.amountCents.toString(), input.expiresInSeconds, input.tag]);
  const existing = await findChargeByKey(em, account.id, idempotencyKey);
  if (existing) return { charge: sameRequest(existing, hash), handOff: null };

  // A charge the receive fee would swallow could never be paid (the payment refuses it): refuse it now.
  const fee = (await feesFor(em, [account.id])).get(account.id)!.pixIn;
  if (fee >= input.amountCents) throw new DomainError('AMOUNT_BELOW_RECEIVE_FEE', { feeCents: fee });

  const txid = newTxid();
  const brCode = buildBrCode({ url: chargeLocation(publicBaseUrl, txid), amountCents: input.amountCents, merchantName, merchantCity: MERCHANT_CITY });
  return em.transactional(async (tx) => {
    const charge = await insertCharge(tx, {
      id: newCuid(),
      tenantId: account.tenantId,
      accountId: account.id,
      pixAccountId: account.pixAccountId,
      txid,
      amountCents: input.amountCents,
      tag: input.tag,
      brCode,
      idempotencyKey,
      requestHash: hash,
      expiresInSeconds: input.expiresInSeconds,
    });
    // A concurrent request with the same key won the insert: answer as its retry.
    if (!charge) return { charge: sameRequest((await findChargeByKey(tx, account.id, idempotencyKey))!, hash), handOff: null };
    const start = pixChargeStart({ chargeId: charge.id, tenantId: charge.tenantId, accountId: charge.accountId, expiresAt: charge.expiresAt });
    return { charge, handOff: await insertHandOff(tx, taskQueue, start) };
  });
}
createCharge.raises = refusals('IDEMPOTENCY_KEY_REUSED', 'AMOUNT_BELOW_RECEIVE_FEE');

/** The integrator's charge: recorded (`createCharge`), then its expiry workflow started once that committed (or by the reconciler). */
export async function issueCharge(
  em: EntityManager,
  client: Client,
  config: Pick<Config, 'TEMPORAL_TASK_QUEUE' | 'publicBaseUrl'>,
  account: Account,
  merchantName: string,
  idempotencyKey: string,
  input: ChargeRequest,
): Promise<PixCharge> {
  const { charge, handOff } = await createCharge(em, config.TEMPORAL_TASK_QUEUE, account, merchantName, config.publicBaseUrl, idempotencyKey, input);
  if (handOff) await dispatchHandOff(client, em, handOff);
  return charge;
}
issueCharge.raises = refusals(createCharge);

function sameRequest(charge: PixCharge, hash: string): PixCharge {
  assertSameRequest(charge.requestHash, hash);
  return charge;
}

/** A charge of this account; a charge of any other account is 404, as if it did not exist. */
export async function chargeOfAccount(em: EntityManager, accountId: string, chargeId: string): Promise<PixCharge> {
  const charge = await findChargeOfAccount(em, accountId, chargeId);
  if (!charge) throw notFound('Charge');
  return charge;
}
chargeOfAccount.raises = refusals('NOT_FOUND');

/** One page of the account's charges, newest first, optionally of one status. */
export async function listCharges(em: EntityManager, cursorKey: string, accountId: string, status: ChargeStatus | undefined, limit: number, cursor: string | undefined) {
  // The status is part of the scope: a cursor of one filtered listing is refused by another.
  const scope = `charges:${accountId}:${status ?? ''}`;
  const after = cursor === undefined ? null : decodeCursor(cursorKey, scope, cursor);
  const rows = await listChargesOfAccount(em, accountId, status, after, limit + 1);
  const { items, pagination } = pageOf(rows, limit, cursorKey, scope);
  return { charges: items.map(chargeView), pagination };
}

/**
 * ACTIVE → EXPIRED with `pix.charge.expired`, in one transaction; a charge that is already PAID or EXPIRED is left as
 * it is (the timer may fire after a payment). Answers the charge's status afterwards.
 */
export async function expireCharge(em: EntityManager, chargeId: string): Promise<ChargeStatus> {
  return em.transactional(async (tx) => {
    const expired = await expireActiveCharge(tx, chargeId);
    if (!expired) {
      const current = await findCharge(tx, chargeId);
      if (!current) throw new Error(`unknown charge ${chargeId}`);
      return current.status;
    }
    await enqueueEvents(tx, [
      {
        tenantId: expired.tenantId,
        accountId: expired.accountId,
        pixAccountId: expired.pixAccountId,
        type: 'pix.charge.expired',
        data: { tag: expired.tag, txid: expired.txid, chargeId: expired.id, occurredAt: new Date().toISOString(), amountCents: expired.amountCents.toString() },
      },
    ]);
    return 'EXPIRED';
  });
}
