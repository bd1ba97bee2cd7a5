import { Migration } from '@mikro-orm/migrations';

/**
 * Trusted contacts ("favorecidos"): a Pix key, or a branch and account of the tenant, that an account's holder
 * registered. A contact is trusted from `trusted_from`, which its delayed-effect workflow sets once `trusts_at` (24 h
 * after it was added) has passed; until then it is null. A removed contact keeps its row (`removed_at`), so adding it
 * again starts a new wait. `is_trusted_contact` (src/ledger/sql/rules.sql) is the one rule that reads it.
 */
export class Migration20261124001100_trusted_contacts extends Migration {
  override name = 'Migration20261124001100_trusted_contacts';

  override up(): void {
    this.addSql(`
      create table trusted_contact (
        id uuid primary key,
        tenant_id uuid not null references tenant (id),
        account_id uuid not null references account (id),
        kind text not null check (kind in ('PIX_KEY', 'ACCOUNT')),
        pix_key text,
        pix_key_type text check (pix_key_type in ('CPF', 'CNPJ', 'EMAIL', 'PHONE', 'EVP')),
        branch text,
        account_number text,
        created_at timestamptz not null default now(),
        trusts_at timestamptz not null,
        trusted_from timestamptz,
        removed_at timestamptz,
        check ((kind = 'PIX_KEY' and pix_key is not null and pix_key_type is not null and branch is null and account_number is null)
            or (kind = 'ACCOUNT' and pix_key is null and pix_key_type is null and branch ~ '^[0-9]{4}$' and account_number ~ '^[1-9][0-9]*$')),
        check (trusts_at >= created_at),
        check (trusted_from >= trusts_at),
        check (removed_at >= created_at)
      )`);
    // One live contact per key or account of an account; these also serve is_trusted_contact's lookups.
    this.addSql(`create unique index trusted_contact_pix_key_idx on trusted_contact (account_id, pix_key) where kind = 'PIX_KEY' and removed_at is null`);
    this.addSql(`create unique index trusted_contact_account_idx on trusted_contact (account_id, branch, account_number) where kind = 'ACCOUNT' and removed_at is null`);
    // The holder's listing, newest first.
    this.addSql('create index trusted_contact_listing_idx on trusted_contact (account_id, created_at desc, id desc) where removed_at is null');
  }

  override down(): void {
    this.addSql('drop table trusted_contact');
  }
}
