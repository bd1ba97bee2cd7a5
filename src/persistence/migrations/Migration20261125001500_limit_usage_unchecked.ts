import { Migration } from '@mikro-orm/migrations';

/**
 * `account_limit_usage` loses its four CHECK constraints (a known channel, no negative amount used). Its only writers
 * are the posting functions (`check_and_count_limits` adds a debit's positive amount, `give_back_limits` never takes a
 * period below 0), under the account's lock, as the table already had no foreign key for the same reason. PostgreSQL
 * builds a table's check expressions again at every statement that writes it: the four cost about 10 µs of every
 * limited debit, a tenth of what limits cost it (bench/README.md, "Transaction limits").
 */
export class Migration20261125001500_limit_usage_unchecked extends Migration {
  override name = 'Migration20261125001500_limit_usage_unchecked';

  override up(): void {
    this.addSql(`
      alter table account_limit_usage
        drop constraint account_limit_usage_channel_check,
        drop constraint account_limit_usage_day_used_cents_check,
        drop constraint account_limit_usage_night_used_cents_check,
        drop constraint account_limit_usage_month_used_cents_check`);
  }

  override down(): void {
    this.addSql(`
      alter table account_limit_usage
        add constraint account_limit_usage_channel_check check (channel in ('PIX', 'TEV')),
        add constraint account_limit_usage_day_used_cents_check check (day_used_cents >= 0),
        add constraint account_limit_usage_night_used_cents_check check (night_used_cents >= 0),
        add constraint account_limit_usage_month_used_cents_check check (month_used_cents >= 0)`);
  }
}
