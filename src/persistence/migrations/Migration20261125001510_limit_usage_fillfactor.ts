import { Migration } from '@mikro-orm/migrations';

/**
 * `account_limit_usage` keeps nine tenths of each page free (fillfactor 10), and its rows are rewritten so (cluster).
 * Every limited debit updates its account's row, and a busy account's row many times a second. Packed, a page held
 * about 80 accounts' rows: their new versions soon filled it, and PostgreSQL could prune a page only while no other
 * session held it, so the updates left the page (no longer HOT: a new index entry each) and the table and its index
 * grew as the load went on. Measured (`bench/tev.ts --limits`, 32 clients, ABBA): limits cost 12.2% and 13.1% of the
 * TEV rate packed, 5.2% and 10.4% with the free space, whose rate no longer fell round after round
 * (bench/README.md, "Transaction limits"). The cost: about 800 bytes of a page per account and channel.
 */
export class Migration20261125001510_limit_usage_fillfactor extends Migration {
  override name = 'Migration20261125001510_limit_usage_fillfactor';

  override up(): void {
    this.addSql('alter table account_limit_usage set (fillfactor = 10)');
    this.addSql('cluster account_limit_usage using account_limit_usage_pkey');
  }

  override down(): void {
    this.addSql('alter table account_limit_usage reset (fillfactor)');
  }
}
