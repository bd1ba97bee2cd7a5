import { Migration } from '@mikro-orm/migrations';

/**
 * Scheduled and recurring payments (issue 26): a Pix to a key, or a TEV to an account of the tenant, paid at a São
 * Paulo date and time, once or weekly or monthly.
 *
 * - `scheduled_payment`: what the holder (or the integrator, for an account of its key) scheduled: the payment, the
 *   rule of its dates, the Idempotency-Key of the request that created it, and `cancelled_at` once cancelled whole.
 * - `scheduled_payment_occurrence`: one row per date of the rule, all written at creation (at most five years of
 *   weekly dates: 262 rows). Each is SCHEDULED until its attempt runs (RUNNING), then PAID (the TEV settled, or the
 *   Pix debited), HELD_FOR_APPROVAL, FAILED or CANCELLED. `attempts` counts the attempts refused for insufficient
 *   balance: each attempt pays under its own idempotency key (schedule, date and that count), and the next one is
 *   made only once this one's refusal is recorded, so an occurrence never pays twice. `next_attempt_at` is the due
 *   time, then each retry's. The workflow of the schedule reads the earliest open row and sleeps until then.
 */
export class Migration20261124001200_scheduled_payments extends Migration {
  override name = 'Migration20261124001200_scheduled_payments';

  override up(): void {
    this.addSql(`
      create table scheduled_payment (
        id uuid primary key,
        tenant_id uuid not null references tenant (id),
        account_id uuid not null references account (id),
        origin text not null check (origin in ('HOLDER_API', 'INTEGRATION_API')),
        kind text not null check (kind in ('PIX_KEY', 'TEV')),
        pix_key text,
        pix_key_type text check (pix_key_type in ('CPF', 'CNPJ', 'EMAIL', 'PHONE', 'EVP')),
        beneficiary_name text,
        branch text,
        account_number text,
        amount_cents bigint not null check (amount_cents > 0),
        description text,
        first_date date not null,
        time_of_day time(0) not null,
        frequency text check (frequency in ('WEEKLY', 'MONTHLY')),
        day_of_month smallint check (day_of_month between 1 and 31),
        occurrence_count integer check (occurrence_count > 0),
        until_date date,
        idempotency_key text not null,
        request_hash text not null,
        created_at timestamptz not null default now(),
        cancelled_at timestamptz,
        check ((kind = 'PIX_KEY' and pix_key is not null and pix_key_type is not null and branch is null and account_number is null)
            or (kind = 'TEV' and pix_key is null and pix_key_type is null and branch ~ '^[0-9]{4}$' and account_number ~ '^[1-9][0-9]*$')),
        check ((frequency is null and day_of_month is null and occurrence_count is null and until_date is null)
            or (frequency is not null and (occurrence_count is null) <> (until_date is null))),
        check (day_of_month is null or frequency = 'MONTHLY'),
        check (until_date >= first_date),
        check (cancelled_at >= created_at)
      )`);
    // A retried creation finds the schedule its Idempotency-Key made.
    this.addSql('create unique index scheduled_payment_key_idx on scheduled_payment (account_id, idempotency_key)');
    // The account's listing, newest first.
    this.addSql('create index scheduled_payment_listing_idx on scheduled_payment (account_id, created_at desc, id desc)');
    this.addSql(`
      create table scheduled_payment_occurrence (
        schedule_id uuid not null references scheduled_payment (id),
        occurrence_date date not null,
        tenant_id uuid not null references tenant (id),
        due_at timestamptz not null,
        status text not null default 'SCHEDULED'
          check (status in ('SCHEDULED', 'RUNNING', 'PAID', 'HELD_FOR_APPROVAL', 'FAILED', 'CANCELLED')),
        attempts smallint not null default 0 check (attempts >= 0),
        next_attempt_at timestamptz not null,
        started_at timestamptz,
        late boolean,
        finished_at timestamptz,
        tev_id text,
        payout_id text,
        approval_request_id uuid,
        reason text,
        primary key (schedule_id, occurrence_date),
        check (next_attempt_at >= due_at),
        check ((status in ('SCHEDULED', 'RUNNING')) = (finished_at is null)),
        check (status <> 'PAID' or (tev_id is null) <> (payout_id is null)),
        check (status <> 'HELD_FOR_APPROVAL' or approval_request_id is not null),
        check (status <> 'FAILED' or reason is not null)
      )`);
    // The schedule's workflow reads its earliest open occurrence.
    this.addSql(`create index scheduled_payment_occurrence_open_idx on scheduled_payment_occurrence (schedule_id, next_attempt_at)
                  where status in ('SCHEDULED', 'RUNNING')`);
  }

  override down(): void {
    this.addSql('drop table scheduled_payment_occurrence');
    this.addSql('drop table scheduled_payment');
  }
}
