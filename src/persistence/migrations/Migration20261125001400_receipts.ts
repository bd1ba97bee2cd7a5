import { Migration } from '@mikro-orm/migrations';

/**
 * Receipts (comprovantes) and the tenant's brand on them. A receipt's authentication code is a keyed MAC over the
 * fields it certifies; `receipt` keeps those fields under their code, so the public verification finds a code typed
 * back and checks it against the fields again, and a receipt shared before its payment was returned still verifies as
 * it was issued. The brand (`tenant:set-brand`) is the name and logo the PDF carries; without one, the tenant's name.
 */
export class Migration20261125001400_receipts extends Migration {
  override name = 'Migration20261125001400_receipts';

  override up(): void {
    this.addSql(`
      create table receipt (
        code text primary key,
        tenant_id uuid not null references tenant (id),
        account_id uuid not null references account (id),
        movement_id text not null references movement (id),
        fields jsonb not null,
        issued_at timestamptz not null default now()
      )`);
    this.addSql('create index receipt_movement_idx on receipt (movement_id)');
    this.addSql('alter table tenant add column brand_name text, add column brand_logo bytea, add column brand_logo_type text');
    this.addSql("alter table tenant add constraint tenant_brand_logo_type_check check (brand_logo_type in ('image/png', 'image/jpeg'))");
  }

  override down(): void {
    this.addSql('alter table tenant drop column brand_name, drop column brand_logo, drop column brand_logo_type');
    this.addSql('drop table receipt');
  }
}
