import { Migration } from '@mikro-orm/migrations';

/**
 * Transaction limits as the Pix rules require (issue 25): per transaction, per day period (06:00 to the night start),
 * per night period (the night start to 06:00) and per calendar month, in America/Sao_Paulo, for Pix and TEV apart.
 *
 * - `limit_policy`: a tenant's defaults per holder type and channel, and the most a holder may raise each to
 *   (`npm run admin -- limits:set`). A tenant without a policy for a holder type and channel sets no limit on it.
 * - `account_limit`: an account's own values, each null where the tenant's default applies, and its night start
 *   (20:00 or 22:00). One row per account, written when its holder first changes a limit.
 * - `account_limit_usage`: what an account has sent per channel in its current day or night period and calendar
 *   month, each with the São Paulo date that period started (a night is keyed by the evening it began; a month by its
 *   first day). A period that is over is replaced by the next one on the account's next debit, so the check is one
 *   read and one upsert of one row, under the account's lock, never a scan of the statement.
 * - `limit_change_request`: an increase a holder asked for, in force at `effective_at` unless cancelled or replaced by
 *   a newer request; at most one PENDING per account. Null values are the ones it does not change.
 * - `pix_payout`: which periods a debit was counted in (null: not counted), so that its reversal or return gives the
 *   amount back to them; and a refusal's details (the limit, its value, what remained), so that a retry answers them.
 */
export class Migration20261124001000_transaction_limits extends Migration {
  override name = 'Migration20261124001000_transaction_limits';

  override up(): void {
    this.addSql(`
      create table limit_policy (
        tenant_id uuid not null references tenant (id),
        holder_type text not null check (holder_type in ('PERSON', 'COMPANY')),
        channel text not null check (channel in ('PIX', 'TEV')),
        per_transaction_cents bigint not null check (per_transaction_cents >= 0),
        day_cents bigint not null check (day_cents >= 0),
        night_cents bigint not null check (night_cents >= 0),
        month_cents bigint not null check (month_cents >= 0),
        max_per_transaction_cents bigint not null check (max_per_transaction_cents >= per_transaction_cents),
        max_day_cents bigint not null check (max_day_cents >= day_cents),
        max_night_cents bigint not null check (max_night_cents >= night_cents),
        max_month_cents bigint not null check (max_month_cents >= month_cents),
        updated_at timestamptz not null default now(),
        primary key (tenant_id, holder_type, channel),
        check (night_cents <= day_cents),
        check (max_night_cents <= max_day_cents)
      )`);
    this.addSql(`
      create table account_limit (
        account_id uuid primary key references account (id),
        tenant_id uuid not null references tenant (id),
        night_start_hour smallint not null default 20 check (night_start_hour in (20, 22)),
        pix_per_transaction_cents bigint check (pix_per_transaction_cents >= 0),
        pix_day_cents bigint check (pix_day_cents >= 0),
        pix_night_cents bigint check (pix_night_cents >= 0),
        pix_month_cents bigint check (pix_month_cents >= 0),
        tev_per_transaction_cents bigint check (tev_per_transaction_cents >= 0),
        tev_day_cents bigint check (tev_day_cents >= 0),
        tev_night_cents bigint check (tev_night_cents >= 0),
        tev_month_cents bigint check (tev_month_cents >= 0),
        updated_at timestamptz not null default now()
      )`);
    // Written only by the posting functions, under the account's lock, like the ledger tables: no foreign key, whose
    // check would be one more query per debit.
    this.addSql(`
      create table account_limit_usage (
        account_id uuid not null,
        channel text not null check (channel in ('PIX', 'TEV')),
        day_of date,
        day_used_cents bigint not null default 0 check (day_used_cents >= 0),
        night_of date,
        night_used_cents bigint not null default 0 check (night_used_cents >= 0),
        month_of date,
        month_used_cents bigint not null default 0 check (month_used_cents >= 0),
        primary key (account_id, channel)
      )`);
    this.addSql(`
      create table limit_change_request (
        id text primary key,
        tenant_id uuid not null references tenant (id),
        account_id uuid not null references account (id),
        night_start_hour smallint check (night_start_hour in (20, 22)),
        pix_per_transaction_cents bigint check (pix_per_transaction_cents >= 0),
        pix_day_cents bigint check (pix_day_cents >= 0),
        pix_night_cents bigint check (pix_night_cents >= 0),
        pix_month_cents bigint check (pix_month_cents >= 0),
        tev_per_transaction_cents bigint check (tev_per_transaction_cents >= 0),
        tev_day_cents bigint check (tev_day_cents >= 0),
        tev_night_cents bigint check (tev_night_cents >= 0),
        tev_month_cents bigint check (tev_month_cents >= 0),
        status text not null check (status in ('PENDING', 'APPLIED', 'CANCELLED', 'REPLACED')),
        requested_at timestamptz not null default now(),
        effective_at timestamptz not null,
        resolved_at timestamptz,
        replaced_by text references limit_change_request (id),
        check ((status = 'PENDING') = (resolved_at is null))
      )`);
    this.addSql(`create unique index limit_change_request_pending_idx on limit_change_request (account_id) where status = 'PENDING'`);
    this.addSql(`create index limit_change_request_account_idx on limit_change_request (account_id, requested_at)`);
    this.addSql(`
      alter table pix_payout
        add column limit_period text check (limit_period in ('DAY', 'NIGHT')),
        add column limit_period_of date,
        add column limit_month_of date,
        add column refusal_details jsonb`);
  }

  override down(): void {
    this.addSql('alter table pix_payout drop column limit_period, drop column limit_period_of, drop column limit_month_of, drop column refusal_details');
    this.addSql('drop table limit_change_request');
    this.addSql('drop table account_limit_usage');
    this.addSql('drop table account_limit');
    this.addSql('drop table limit_policy');
  }
}
