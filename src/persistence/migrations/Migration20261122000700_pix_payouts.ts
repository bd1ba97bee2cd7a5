import { Migration } from '@mikro-orm/migrations';

export class Migration20261122000700_pix_payouts extends Migration {
  override name = 'Migration20261122000700_pix_payouts';

  override up(): void {
    // Reversals and refunds point at the movement they return money for.
    this.addSql('create index movement_reverses_idx on movement (reverses_movement_id) where reverses_movement_id is not null');
    this.addSql(`
      create table pix_payout (
        id text primary key,
        tenant_id uuid not null references tenant (id),
        account_id uuid not null references account (id),
        channel text not null check (channel in ('PIX_OUT', 'QR_CODE_OUT')),
        amount_cents bigint not null check (amount_cents > 0),
        fee_cents bigint,
        pix_key text not null,
        pix_key_type text not null check (pix_key_type in ('CPF', 'CNPJ', 'EMAIL', 'PHONE', 'EVP')),
        beneficiary jsonb not null,
        qr jsonb,
        description text not null,
        idempotency_key text not null,
        request_hash text not null,
        -- REQUESTED: recorded, not debited yet; REJECTED: refused before any debit.
        status text not null check (status in ('REQUESTED', 'REJECTED', 'PROCESSING', 'POSTED', 'FAILED', 'CANCELLED', 'REFUNDED')),
        reason text,
        movement_id text references movement (id),
        end_to_end_id text,
        refunded_cents bigint not null default 0,
        created_at timestamptz not null default now(),
        settled_at timestamptz,
        unique (account_id, idempotency_key)
      )`);
    // The sandbox PSP's own state: what a real provider would keep on its side.
    this.addSql(`
      create table sandbox_psp_payout (
        payout_id text primary key,
        amount_cents bigint not null,
        end_to_end_id text not null,
        outcome text not null check (outcome in ('POSTED', 'FAILED', 'CANCELLED')),
        reason text,
        refund_cents bigint not null default 0,
        refund_end_to_end_id text,
        submitted_at timestamptz not null default now(),
        settles_at timestamptz not null,
        refunds_at timestamptz
      )`);
  }

  override down(): void {
    this.addSql('drop table sandbox_psp_payout');
    this.addSql('drop table pix_payout');
    this.addSql('drop index movement_reverses_idx');
  }
}
