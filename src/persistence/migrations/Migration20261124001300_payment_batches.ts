import { Migration } from '@mikro-orm/migrations';

/**
 * Batch payouts ("pagamento em lote"): an integrator's batch of up to 5,000 Pix and TEV items of one account, validated
 * when it is received and paid by its workflow (`payment-batch-<id>`), each item through the posting functions of an
 * immediate payment, under its own payout id. `payment_batch` is the batch as asked for (its Idempotency-Key and the
 * request's hash) and where it stands; `payment_batch_item` each item, its validation and its outcome. A batch under
 * dual approval is held as a whole: one approval request of kind BATCH. A TEV paid as a batch's item is recorded
 * with origin BATCH: its batch was authorized (and approved, on an account with dual approval) as a whole.
 */
export class Migration20261124001300_payment_batches extends Migration {
  override name = 'Migration20261124001300_payment_batches';

  override up(): void {
    this.addSql(`
      create table payment_batch (
        id text primary key,
        tenant_id uuid not null references tenant (id),
        account_id uuid not null references account (id),
        idempotency_key text not null,
        request_hash text not null,
        -- AWAITING_APPROVAL: held for the account's approver; PENDING: may start; PROCESSING: paying its items.
        -- Final: FINISHED (every item paid, failed, invalid or cancelled), CANCELLED (before it started), REJECTED
        -- (its approval was rejected, expired or cancelled), REFUSED (its total with fees was not available at its start).
        status text not null check (status in ('AWAITING_APPROVAL', 'PENDING', 'PROCESSING', 'FINISHED', 'CANCELLED', 'REJECTED', 'REFUSED')),
        reason text,
        approval_request_id uuid references approval_request (id),
        item_count integer not null check (item_count between 1 and 5000),
        created_at timestamptz not null default now(),
        started_at timestamptz,
        cancelled_at timestamptz,
        finished_at timestamptz,
        unique (account_id, idempotency_key)
      )`);
    this.addSql(`
      create table payment_batch_item (
        batch_id text not null references payment_batch (id),
        -- The item's position in the request, from 0.
        ord integer not null,
        external_ref text not null,
        kind text not null check (kind in ('PIX', 'TEV')),
        amount_cents bigint not null check (amount_cents > 0),
        description text,
        -- PIX: the key and its owner as the directory answered (the document as the payer may see it).
        pix_key text,
        pix_key_type text check (pix_key_type in ('CPF', 'CNPJ', 'EMAIL', 'PHONE', 'EVP')),
        beneficiary jsonb,
        -- TEV: the destination as written, and the account it names.
        branch text,
        account_number text,
        destination_account_id uuid,
        -- The transfer's or the payout's id; null for an invalid item, which is never paid.
        payout_id text,
        status text not null check (status in ('INVALID', 'PENDING', 'PROCESSING', 'PAID', 'FAILED', 'CANCELLED')),
        reason text,
        updated_at timestamptz not null default now(),
        primary key (batch_id, ord),
        unique (batch_id, external_ref),
        check ((kind = 'PIX' and pix_key is not null and pix_key_type is not null and branch is null)
            or (kind = 'TEV' and pix_key is null and branch is not null and account_number is not null)),
        check ((status = 'INVALID') = (payout_id is null))
      )`);
    // What the batch's workflow pays next, by kind in request order, and the Pix it waits for: each step reads only
    // those, not the batch's thousands of items.
    this.addSql(`create index payment_batch_item_pending_idx on payment_batch_item (batch_id, kind, ord) where status = 'PENDING'`);
    this.addSql(`create index payment_batch_item_processing_idx on payment_batch_item (batch_id) where status = 'PROCESSING'`);
    this.addSql('alter table approval_request drop constraint approval_request_kind_check');
    this.addSql(`alter table approval_request add constraint approval_request_kind_check check (kind in ('TEV', 'PIX', 'BATCH'))`);
    this.addSql('alter table tev_transfer drop constraint tev_transfer_origin_check');
    this.addSql(`alter table tev_transfer add constraint tev_transfer_origin_check check (origin in ('HOLDER_API', 'INTEGRATION_API', 'APPROVAL', 'BATCH'))`);
  }

  override down(): void {
    this.addSql('alter table tev_transfer drop constraint tev_transfer_origin_check');
    this.addSql(`alter table tev_transfer add constraint tev_transfer_origin_check check (origin in ('HOLDER_API', 'INTEGRATION_API', 'APPROVAL'))`);
    this.addSql('alter table approval_request drop constraint approval_request_kind_check');
    this.addSql(`alter table approval_request add constraint approval_request_kind_check check (kind in ('TEV', 'PIX'))`);
    this.addSql('drop table payment_batch_item');
    this.addSql('drop table payment_batch');
  }
}
