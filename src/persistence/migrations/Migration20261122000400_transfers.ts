import { Migration } from '@mikro-orm/migrations';

export class Migration20261122000400_transfers extends Migration {
  override name = 'Migration20261122000400_transfers';

  override up(): void {
    // A tenant's schedule (account_id null) and per-account overrides; an unset field falls back, then to 0.
    this.addSql(`
      create table fee_schedule (
        tenant_id uuid not null references tenant (id),
        account_id uuid references account (id),
        tev_out_cents bigint check (tev_out_cents >= 0),
        tev_in_cents bigint check (tev_in_cents >= 0),
        pix_out_cents bigint check (pix_out_cents >= 0),
        pix_in_cents bigint check (pix_in_cents >= 0),
        qr_out_cents bigint check (qr_out_cents >= 0),
        updated_at timestamptz not null default now(),
        unique nulls not distinct (tenant_id, account_id)
      )`);
    this.addSql(`
      create table tev_transfer (
        id text primary key,
        tenant_id uuid not null references tenant (id),
        source_account_id uuid not null references account (id),
        destination_account_id uuid not null references account (id),
        amount_cents bigint not null check (amount_cents > 0),
        fee_out_cents bigint,
        fee_in_cents bigint,
        description text,
        external_ref text,
        end_to_end_id text not null unique check (length(end_to_end_id) = 36),
        idempotency_key text not null,
        request_hash text not null,
        origin text not null check (origin in ('HOLDER_API', 'INTEGRATION_API', 'APPROVAL')),
        status text not null check (status in ('PROCESSING', 'DONE', 'FAILED')),
        reason text,
        source_movement_id text references movement (id),
        destination_movement_id text references movement (id),
        created_at timestamptz not null default now(),
        resolved_at timestamptz,
        unique (source_account_id, idempotency_key),
        check (source_account_id <> destination_account_id)
      )`);
    this.addSql('create unique index tev_transfer_external_ref_unique on tev_transfer (source_account_id, external_ref) where external_ref is not null');
    this.addSql('create index tev_transfer_destination_idx on tev_transfer (destination_account_id)');
    // Events are written in the transaction of the change that causes them; webhook delivery reads them from here.
    this.addSql(`
      create table event_outbox (
        id uuid primary key,
        tenant_id uuid not null references tenant (id),
        account_id uuid not null references account (id),
        pix_account_id text not null,
        type text not null,
        data jsonb not null,
        created_at timestamptz not null default now(),
        dispatched_at timestamptz
      )`);
    this.addSql('create index event_outbox_pending_idx on event_outbox (created_at) where dispatched_at is null');
  }

  override down(): void {
    this.addSql('drop table event_outbox');
    this.addSql('drop table tev_transfer');
    this.addSql('drop table fee_schedule');
  }
}
