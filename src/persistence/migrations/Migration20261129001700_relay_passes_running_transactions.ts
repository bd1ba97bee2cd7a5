import { Migration } from '@mikro-orm/migrations';

/**
 * The outbox relay no longer waits for the oldest running transaction. It read only events of transactions below
 * `pg_snapshot_xmin`, which is the whole server's: one long write transaction anywhere in the PostgreSQL server (a
 * backfill, an operator's fix, another database's work) held back every webhook for as long as it ran. The relay now
 * moves every committed event past its cursor, and keeps in `running` the transactions below the cursor that were still
 * running when it moved there: their events, once committed, are behind it and are moved from that list. An existing
 * cursor starts with none: it never passed a running transaction.
 */
export class Migration20261129001700_relay_passes_running_transactions extends Migration {
  override name = 'Migration20261129001700_relay_passes_running_transactions';

  override up(): void {
    this.addSql(`alter table event_relay_cursor add column running xid8[] not null default '{}'`);
  }

  override down(): void {
    this.addSql('alter table event_relay_cursor drop column running');
  }
}
