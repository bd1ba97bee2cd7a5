import { Migration } from '@mikro-orm/migrations';

/**
 * Pix charges (cobranças): a txid and a dynamic BR Code a payer pays once, before it expires; the receiver may then
 * return part or all of the money in refunds. Money itself lives in the ledger: the charge points at its movements.
 */
export class Migration20261122000800_charges extends Migration {
  override name = 'Migration20261122000800_charges';

  override up(): void {
    this.addSql(`
      create table pix_charge (
        id text primary key,
        tenant_id uuid not null references tenant (id),
        account_id uuid not null references account (id),
        pix_account_id text not null,
        -- The Banco Central's txid of a charge: 26 to 35 letters and digits, unique across the platform.
        txid text not null unique check (txid ~ '^[A-Za-z0-9]{26,35}$'),
        amount_cents bigint not null check (amount_cents > 0),
        tag text check (char_length(tag) between 1 and 64),
        br_code text not null,
        status text not null check (status in ('ACTIVE', 'PAID', 'EXPIRED')),
        paid_cents bigint not null default 0 check (paid_cents >= 0),
        refunded_cents bigint not null default 0 check (refunded_cents >= 0),
        payer jsonb,
        end_to_end_id text unique,
        movement_id text references movement (id),
        idempotency_key text not null,
        request_hash text not null,
        expires_at timestamptz not null,
        created_at timestamptz not null default now(),
        paid_at timestamptz,
        unique (account_id, idempotency_key),
        check (refunded_cents <= paid_cents),
        -- A payment is all or nothing: a PAID charge has its payment, any other has none.
        check ((status = 'PAID') = (paid_at is not null and movement_id is not null and end_to_end_id is not null and paid_cents = amount_cents)),
        check (status = 'PAID' or paid_cents = 0)
      )`);
    // Serves the listing: one account, newest first, keyset pagination on (created_at, id).
    this.addSql('create index pix_charge_listing_idx on pix_charge (account_id, created_at desc, id desc)');
    this.addSql(`
      create table pix_charge_refund (
        id text primary key,
        charge_id text not null references pix_charge (id),
        amount_cents bigint not null check (amount_cents > 0),
        refund_end_to_end_id text not null unique,
        movement_id text not null references movement (id),
        idempotency_key text not null,
        created_at timestamptz not null default now(),
        unique (charge_id, idempotency_key)
      )`);
  }

  override down(): void {
    this.addSql('drop table pix_charge_refund');
    this.addSql('drop table pix_charge');
  }
}
