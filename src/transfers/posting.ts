import type { EntityManager } from '@mikro-orm/postgresql';
import type { Config } from '../config.ts';
import { enqueueEvents, type OutboxEvent } from '../events/outbox.ts';
import { feesFor } from '../fees/service.ts';
import { feeRevenueAccountId, lockAccounts, postMovements, type LockedAccount, type MovementInput } from '../ledger/posting.ts';
import { paymentDate } from '../shared/time.ts';
import type { TevOutcome } from '../../workflows/tev.ts';
import { defaultTevDescription, tevMetadata } from './metadata.ts';

interface TevRow {
  id: string;
  tenant_id: string;
  source_account_id: string;
  destination_account_id: string;
  amount_cents: string;
  fee_out_cents: string | null;
  description: string | null;
  external_ref: string | null;
  end_to_end_id: string;
  status: 'PROCESSING' | 'DONE' | 'FAILED';
  reason: string | null;
  source_movement_id: string | null;
  destination_movement_id: string | null;
  resolved_at: string | null;
  created_at: string;
}

/** Why a transfer is refused (the `reason` of a 422 `rejected`). */
export const REJECTIONS = {
  INSUFFICIENT_BALANCE: 'INSUFFICIENT_BALANCE',
  SOURCE_NOT_ACTIVE: 'SOURCE_NOT_ACTIVE',
  DESTINATION_NOT_ACTIVE: 'DESTINATION_NOT_ACTIVE',
  AMOUNT_ABOVE_LIMIT: 'AMOUNT_ABOVE_LIMIT',
  AMOUNT_BELOW_RECEIVE_FEE: 'AMOUNT_BELOW_RECEIVE_FEE',
} as const;

const active = (a: LockedAccount) => a.status === 'APPROVED' && a.holderStatus === 'ACTIVE' && a.onboardingStep === 'DONE';

function outcomeOf(row: TevRow): TevOutcome {
  return {
    tevId: row.id,
    status: row.status === 'DONE' ? 'DONE' : 'FAILED',
    amountCents: row.amount_cents,
    feeCents: row.status === 'DONE' ? (row.fee_out_cents ?? '0') : '0',
    reason: row.reason,
    resolvedAt: new Date(row.resolved_at!).toISOString(),
  };
}

/**
 * Posts one TEV in one database transaction: locks the transfer and the accounts (in id order), applies the rules,
 * then writes movements, ledger entries, balances, the transfer's resolution and its events, or only the rejection
 * and its event. Running it again returns the stored outcome.
 */
export async function postTev(em: EntityManager, config: Config, tevId: string): Promise<TevOutcome> {
  return em.transactional(async (tx) => {
    const [tev] = await tx.execute<TevRow[]>('select * from tev_transfer where id = ? for update', [tevId]);
    if (!tev) throw new Error(`unknown TEV ${tevId}`);
    if (tev.status !== 'PROCESSING') return outcomeOf(tev);

    // Fees first: the tenant's fee revenue account is locked (a row every transfer of the tenant would queue on) only
    // when there is a fee to credit.
    const fees = await feesFor(tx, [tev.source_account_id, tev.destination_account_id]);
    const feeOut = fees.get(tev.source_account_id)!.tevOut;
    const feeIn = fees.get(tev.destination_account_id)!.tevIn;
    const revenueId = feeOut + feeIn > 0n ? await feeRevenueAccountId(tx, tev.tenant_id) : null;
    const accounts = await lockAccounts(tx, [tev.source_account_id, tev.destination_account_id, ...(revenueId ? [revenueId] : [])]);
    const source = accounts.get(tev.source_account_id)!;
    const destination = accounts.get(tev.destination_account_id)!;
    const amount = BigInt(tev.amount_cents);
    const description = tev.description ?? defaultTevDescription(destination.holderName);
    const occurredAt = new Date();

    const eventBase = (side: LockedAccount) => ({
      tevTransferId: tev.id,
      endToEndId: tev.end_to_end_id,
      amountCents: tev.amount_cents,
      externalRef: tev.external_ref,
      description,
      payerAccount: source.number,
      payerBranch: source.agency,
      beneficiaryAccount: destination.number,
      beneficiaryBranch: destination.agency,
      occurredAt: occurredAt.toISOString(),
      accountForEvent: side,
    });
    const event = (side: LockedAccount, type: OutboxEvent['type'], data: ReturnType<typeof eventBase> & Record<string, unknown>): OutboxEvent => {
      const { accountForEvent: _, ...rest } = data;
      return { tenantId: tev.tenant_id, accountId: side.id, pixAccountId: side.pixAccountId, type, data: rest };
    };

    const reason = !active(source)
      ? REJECTIONS.SOURCE_NOT_ACTIVE
      : !active(destination)
        ? REJECTIONS.DESTINATION_NOT_ACTIVE
        : amount > config.TEV_MAX_AMOUNT_CENTS
          ? REJECTIONS.AMOUNT_ABOVE_LIMIT
          : amount <= feeIn
            ? REJECTIONS.AMOUNT_BELOW_RECEIVE_FEE
            : source.balanceCents < amount + feeOut
              ? REJECTIONS.INSUFFICIENT_BALANCE
              : null;

    if (reason) {
      const [row] = await tx.execute<TevRow[]>(
        `update tev_transfer set status = 'FAILED', reason = ?, fee_out_cents = ?, fee_in_cents = ?, description = ?, resolved_at = now()
          where id = ? returning *`,
        [reason, feeOut.toString(), feeIn.toString(), description, tev.id],
      );
      await enqueueEvents(tx, [event(source, 'tev.out.failed', { ...eventBase(source), movementId: null, feeCents: feeOut.toString(), reason })]);
      return outcomeOf(row!);
    }

    // `date` is when the transfer was submitted; `paymentDate` when it settled.
    const date = new Date(tev.created_at).toISOString();
    const common = {
      tenantId: tev.tenant_id,
      operationId: tev.id,
      channel: 'TEF',
      status: 'DONE',
      statusExternal: 'SUCCESS',
      amountCents: amount,
      description,
      externalRef: tev.external_ref,
      endToEndId: tev.end_to_end_id,
      reversesMovementId: null,
    } as const;
    const metadata = tevMetadata(source, destination, { date, endToEndId: tev.end_to_end_id, paymentDate: paymentDate(occurredAt) });
    const withFee = (kind: 'PRIMARY', primary: bigint, fee: bigint) => [{ kind, amountCents: primary }, ...(fee > 0n ? [{ kind: 'FEE' as const, amountCents: -fee }] : [])];
    const movements: MovementInput[] = [
      { ...common, accountId: source.id, source: 'TEF_OUT', direction: 'DEBIT', payoutStatus: 'POSTED', feeCents: feeOut, metadata: metadata.outgoing, lines: withFee('PRIMARY', -amount, feeOut) },
      { ...common, accountId: destination.id, source: 'TEF_IN', direction: 'CREDIT', payoutStatus: null, feeCents: feeIn, metadata: metadata.incoming, lines: withFee('PRIMARY', amount, feeIn) },
    ];
    if (revenueId) {
      // The platform's side of the double entry: both fees of the transfer, in one credit.
      movements.push({ ...common, accountId: revenueId, source: 'FEE_REVENUE', direction: 'CREDIT', payoutStatus: null, amountCents: feeOut + feeIn, feeCents: 0n, description: `Tarifas TEV ${tev.id}`, metadata: {}, lines: [{ kind: 'FEE', amountCents: feeOut + feeIn }] });
    }
    const [out, into] = await postMovements(tx, accounts, movements);
    const [row] = await tx.execute<TevRow[]>(
      `update tev_transfer set status = 'DONE', fee_out_cents = ?, fee_in_cents = ?, description = ?, source_movement_id = ?, destination_movement_id = ?, resolved_at = now()
        where id = ? returning *`,
      [feeOut.toString(), feeIn.toString(), description, out!.id, into!.id, tev.id],
    );
    await enqueueEvents(tx, [
      event(source, 'tev.out.succeeded', { ...eventBase(source), movementId: out!.id, feeCents: feeOut.toString() }),
      event(destination, 'tev.in.received', { ...eventBase(destination), movementId: into!.id, feeCents: feeIn.toString() }),
    ]);
    return outcomeOf(row!);
  });
}
