import { Migration } from '@mikro-orm/migrations';

/**
 * SQL functions now live as source files (`src/persistence/functions.ts`), applied after the migrations whenever
 * their text changes; this table records the checksum of what each database last applied.
 */
export class Migration20261124000100_function_sources extends Migration {
  override name = 'Migration20261124000100_function_sources';

  override up(): void {
    this.addSql(`
      create table schema_function (
        name text primary key,
        checksum text not null,
        applied_at timestamptz not null default now()
      )`);
  }

  override down(): void {
    this.addSql('drop table schema_function');
  }
}
