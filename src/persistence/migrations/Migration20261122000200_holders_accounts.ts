import { Migration } from '@mikro-orm/migrations';

export class Migration20261122000200_holders_accounts extends Migration {
  override name = 'Migration20261122000200_holders_accounts';

  override up(): void {
    this.addSql(`
      create table holder (
        id uuid primary key,
        tenant_id uuid not null references tenant (id),
        type text not null check (type in ('PERSON', 'COMPANY')),
        name text not null,
        document text not null check (document ~ '^[0-9]{11}$|^[0-9]{14}$'),
        email text not null,
        email_confirmed boolean not null default false,
        phone text,
        phone_confirmed boolean not null default false,
        password_hash text not null,
        status text not null check (status in ('PENDING', 'ACTIVE', 'BLOCKED', 'CLOSED')),
        onboarding_step text not null check (onboarding_step in ('PENDING', 'IN_PROGRESS', 'DONE', 'REJECTED')),
        onboarding_requisition_id bigint not null unique,
        kyc jsonb,
        pin_hash text,
        pin_failed_attempts integer not null default 0,
        pin_locked_at timestamptz,
        created_at timestamptz not null default now(),
        updated_at timestamptz not null default now(),
        unique (tenant_id, document),
        unique (tenant_id, email)
      )`);
    this.addSql('create sequence account_number_seq start 100001');
    this.addSql(`
      create table account (
        id uuid primary key,
        tenant_id uuid not null references tenant (id),
        holder_id uuid references holder (id),
        kind text not null check (kind in ('HOLDER', 'FEE_REVENUE', 'SETTLEMENT')),
        bank text not null default '000',
        agency text not null check (agency ~ '^[0-9]{4}$'),
        number text not null check (number ~ '^[0-9]+$'),
        pix_account_id text not null unique,
        core_account_id text not null unique,
        status text not null check (status in ('PENDING', 'APPROVED', 'REJECTED')),
        -- The settlement account mirrors money at the Pix provider: it goes negative as Pix comes in.
        balance_cents bigint not null default 0 check (balance_cents >= 0 or kind = 'SETTLEMENT'),
        monthly_goal_cents bigint not null default 0 check (monthly_goal_cents >= 0),
        created_at timestamptz not null default now(),
        unique (tenant_id, agency, number),
        check ((kind = 'HOLDER') = (holder_id is not null))
      )`);
    // Onboarding provisions exactly one account per holder, however often its activity is retried.
    this.addSql(`create unique index account_holder_unique on account (holder_id) where kind = 'HOLDER'`);
    this.addSql(`create unique index account_fee_revenue_unique on account (tenant_id) where kind = 'FEE_REVENUE'`);
    this.addSql(`create unique index account_settlement_unique on account (tenant_id) where kind = 'SETTLEMENT'`);
    this.addSql(`
      create table rate_limit_hit (
        bucket text not null,
        window_start timestamptz not null,
        hits integer not null,
        primary key (bucket, window_start)
      )`);
  }

  override down(): void {
    this.addSql('drop table rate_limit_hit');
    this.addSql('drop table account');
    this.addSql('drop sequence account_number_seq');
    this.addSql('drop table holder');
  }
}
