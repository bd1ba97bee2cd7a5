import { Migration } from '@mikro-orm/migrations';

export class Migration20261122000100_tenants extends Migration {
  override name = 'Migration20261122000100_tenants';

  override up(): void {
    this.addSql(`
      create table tenant (
        id uuid primary key,
        name text not null,
        pin_exempt boolean not null default false,
        created_at timestamptz not null default now()
      )`);
    this.addSql(`
      create table tenant_api_key (
        id text primary key,
        tenant_id uuid not null references tenant (id),
        prefix text not null unique,
        secret_hash text not null,
        created_at timestamptz not null default now(),
        revoked_at timestamptz
      )`);
    this.addSql('create index tenant_api_key_tenant_idx on tenant_api_key (tenant_id)');
    this.addSql(`
      create table api_key (
        id text primary key,
        tenant_id uuid not null references tenant (id),
        prefix text not null unique,
        secret_hash text not null,
        pix_account_ids text[] not null check (cardinality(pix_account_ids) > 0),
        created_at timestamptz not null default now(),
        revoked_at timestamptz
      )`);
    this.addSql('create index api_key_tenant_idx on api_key (tenant_id)');
  }

  override down(): void {
    this.addSql('drop table api_key');
    this.addSql('drop table tenant_api_key');
    this.addSql('drop table tenant');
  }
}
