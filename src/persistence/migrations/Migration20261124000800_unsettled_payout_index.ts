import { Migration } from '@mikro-orm/migrations';

/**
 * The settlement backlog (`src/pix/settlement-backlog.ts`) counts the payouts still waiting for settlement, and the
 * age of the oldest, across the platform and per tenant. Only those payouts are in this index, so the count reads
 * as many entries as there are payouts waiting, however many have settled before, and the tenant and creation time
 * it reads are in the index itself. The price: a payout's move out of REQUESTED or PROCESSING is no longer a HOT
 * update (once per payout, beside its ledger postings).
 */
export class Migration20261124000800_unsettled_payout_index extends Migration {
  override name = 'Migration20261124000800_unsettled_payout_index';

  override up(): void {
    this.addSql(`create index pix_payout_unsettled_idx on pix_payout (tenant_id, created_at) where status in ('REQUESTED', 'PROCESSING')`);
  }

  override down(): void {
    this.addSql('drop index pix_payout_unsettled_idx');
  }
}
