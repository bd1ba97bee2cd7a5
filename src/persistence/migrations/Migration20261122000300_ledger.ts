import { Migration } from '@mikro-orm/migrations';

/**
 * The double-entry ledger. A movement is one side of one operation on one account (the statement transaction and
 * the payout); its ledger entries (PRIMARY, FEE, REVERSAL) carry signed cents and the balance after each.
 */
export class Migration20261122000300_ledger extends Migration {
  override name = 'Migration20261122000300_ledger';

  override up(): void {
    this.addSql(`
      create table movement (
        id text primary key,
        statement_id uuid not null unique,
        tenant_id uuid not null references tenant (id),
        account_id uuid not null references account (id),
        operation_id text not null,
        source text not null check (source in ('TEF_OUT', 'TEF_IN', 'PIX_OUT', 'QR_CODE_OUT', 'PIX_IN', 'FEE_REVENUE', 'SETTLEMENT', 'REVERSAL')),
        channel text not null check (channel in ('TEF', 'PIX')),
        direction text not null check (direction in ('DEBIT', 'CREDIT')),
        status text not null check (status in ('DONE', 'PENDING', 'FAILED')),
        payout_status text check (payout_status in ('PENDING', 'PROCESSING', 'POSTED', 'FAILED', 'CANCELLED', 'REFUNDED')),
        status_external text not null,
        amount_cents bigint not null check (amount_cents > 0),
        fee_cents bigint not null default 0 check (fee_cents >= 0),
        balance_after_cents bigint not null,
        description text not null,
        external_ref text,
        end_to_end_id text,
        reverses_movement_id text references movement (id),
        metadata jsonb not null default '{}',
        created_at timestamptz not null default now(),
        -- An operation posts at most once on each side of each account: retries of a posting are harmless.
        unique (operation_id, account_id, source)
      )`);
    // Serves the statement: one account, newest first, keyset pagination on (created_at, id).
    this.addSql('create index movement_statement_idx on movement (account_id, created_at desc, id desc)');
    this.addSql(`
      create table ledger_entry (
        id text primary key,
        movement_id text not null references movement (id),
        account_id uuid not null references account (id),
        line smallint not null,
        kind text not null check (kind in ('PRIMARY', 'FEE', 'REVERSAL')),
        amount_cents bigint not null check (amount_cents <> 0),
        balance_after_cents bigint not null,
        created_at timestamptz not null default now(),
        unique (movement_id, line)
      )`);
    this.addSql('create index ledger_entry_account_idx on ledger_entry (account_id, created_at)');
  }

  override down(): void {
    this.addSql('drop table ledger_entry');
    this.addSql('drop table movement');
  }
}
