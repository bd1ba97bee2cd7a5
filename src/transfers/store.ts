/**
 * The `tev_transfer` table's SQL: the settlement statement (`settle_tev`, src/ledger/sql/settle_tev.sql, which writes the transfer
 * with its movements, entries and events) and the reads of one transfer.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { callPostingBatch, callPostingFunction } from '../ledger/store.ts';
import { isoUtc } from '../shared/pagination.ts';

/** One answer of `settle_tev`: the transfer's state, or why the request cannot become a transfer. */
export interface SettleRow {
  code: string;
  tev_id: string;
  status: string | null;
  reason: string | null;
  amount_cents: string | null;
  fee_out_cents: string | null;
  resolved_at: string | null;
  destination_id: string | null;
}

/** The parameters of `settle_tev`, with the casts their text needs. */
const SETTLE_PARAMS = ['', '', '', '', '', '', '', '', '', '', '', '', '', '', '', '::text[]', '::jsonb', ''];

/** One call of `settle_tev` (see `callPostingFunction`). */
export const callSettleTev = (em: EntityManager, params: unknown[]): Promise<SettleRow> => callPostingFunction<SettleRow>(em, 'settle_tev', '*', SETTLE_PARAMS, params);

/** One request of a `settle_tev_batch` call (the `tev_batch_item` type of migrations 1300 and 20261124000950). */
export interface TevBatchItem {
  tev_id: string;
  tenant_id: string;
  source_id: string;
  destination_id: string | null;
  destination_branch: string | null;
  destination_account: string | null;
  amount: string;
  description: string | null;
  external_ref: string | null;
  end_to_end_id: string;
  idempotency_key: string;
  request_hash: string;
  origin: string;
  ids: string[];
}

/** The answers of one `settle_tev_batch` call, in the order of its items. */
export const callSettleTevBatch = (em: EntityManager, items: TevBatchItem[], maxAmountCents: string): Promise<SettleRow[]> =>
  callPostingBatch<SettleRow>(em, 'settle_tev_batch', '*', ['::jsonb', ''], [JSON.stringify(items), maxAmountCents], items.length);

export type TevStatus = 'PROCESSING' | 'DONE' | 'FAILED';

/** A transfer with both sides' branch and number and the beneficiary's name and document. */
export interface TevRecord {
  id: string;
  status: TevStatus;
  sourceAccountId: string;
  destinationAccountId: string;
  amountCents: string;
  feeOutCents: string | null;
  feeInCents: string | null;
  /** As the statement says it: the sender's, else the default (`tev_description`, src/ledger/sql/rules.sql). */
  description: string;
  externalRef: string | null;
  sourceMovementId: string | null;
  /** ISO 8601 UTC. */
  createdAt: string;
  resolvedAt: string | null;
  source: { branch: string; account: string };
  /** `beneficiary`: as the sender's statement shows it (`tev_beneficiary`, src/ledger/sql/rules.sql). */
  destination: { branch: string; account: string; holderName: string | null; holderDocument: string | null; beneficiary: Record<string, unknown> };
}

interface TevTransferRow {
  id: string;
  status: TevStatus;
  source_account_id: string;
  destination_account_id: string;
  amount_cents: string;
  fee_out_cents: string | null;
  fee_in_cents: string | null;
  description: string;
  external_ref: string | null;
  source_movement_id: string | null;
  created_at: string;
  resolved_at: string | null;
  src_agency: string;
  src_number: string;
  dst_agency: string;
  dst_number: string;
  dst_holder_name: string | null;
  dst_holder_document: string | null;
  dst_beneficiary: Record<string, unknown>;
}

const toRecord = (r: TevTransferRow): TevRecord => ({
  id: r.id,
  status: r.status,
  sourceAccountId: r.source_account_id,
  destinationAccountId: r.destination_account_id,
  amountCents: String(r.amount_cents),
  feeOutCents: r.fee_out_cents === null ? null : String(r.fee_out_cents),
  feeInCents: r.fee_in_cents === null ? null : String(r.fee_in_cents),
  description: r.description,
  externalRef: r.external_ref,
  sourceMovementId: r.source_movement_id,
  createdAt: r.created_at,
  resolvedAt: r.resolved_at,
  source: { branch: r.src_agency, account: r.src_number },
  destination: { branch: r.dst_agency, account: r.dst_number, holderName: r.dst_holder_name, holderDocument: r.dst_holder_document, beneficiary: r.dst_beneficiary },
});

/** One transfer of the tenant, or null. */
export async function findTev(em: EntityManager, tenantId: string, tevId: string): Promise<TevRecord | null> {
  const [row] = await em.execute<TevTransferRow[]>(
    `select t.id, t.status, t.source_account_id, t.destination_account_id, t.amount_cents, t.fee_out_cents, t.fee_in_cents,
            tev_description(t.description, h.name) as description, t.external_ref, t.source_movement_id, ${isoUtc('t.created_at')} as created_at, ${isoUtc('t.resolved_at')} as resolved_at,
            s.agency as src_agency, s.number as src_number, d.agency as dst_agency, d.number as dst_number,
            h.name as dst_holder_name, h.document as dst_holder_document,
            tev_beneficiary(h.name, d.agency, d.number, h.document) as dst_beneficiary
       from tev_transfer t
       join account s on s.id = t.source_account_id
       join account d on d.id = t.destination_account_id
       left join holder h on h.id = d.holder_id
      where t.id = ? and t.tenant_id = ?`,
    [tevId, tenantId],
  );
  return row ? toRecord(row) : null;
}

/**
 * Which of a beneficiary's accounts are trusted contacts of the paying account now, by the rule the limits read
 * (`is_trusted_contact`, src/ledger/sql/rules.sql): the beneficiary lookup shows it beside each account.
 */
export async function trustedContactsAmong(em: EntityManager, payerAccountId: string, accounts: { id: string; agency: string; number: string }[]): Promise<Set<string>> {
  if (accounts.length === 0) return new Set();
  const rows = await em.execute<{ id: string }[]>(
    `select a.id from jsonb_to_recordset(?::jsonb) as a(id text, agency text, number text)
      where is_trusted_contact(?, null, a.agency, a.number, now())`,
    [JSON.stringify(accounts.map(({ id, agency, number }) => ({ id, agency, number }))), payerAccountId],
  );
  return new Set(rows.map((r) => r.id));
}
