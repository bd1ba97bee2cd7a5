import { Migration } from '@mikro-orm/migrations';

/**
 * A Pix payout's reference to its debit's movement is checked at commit. A batch of Pix debits then records its
 * payouts before it posts them (`debit_pix_payout_batch`), so that the posting, which locks the tenant's settlement
 * account that every Pix debit of the tenant credits, is the last thing the transaction does: parallel batches of one
 * tenant queue on that account for the posting and their commit only, not for the payouts' inserts too. A payout
 * whose movement is never written still fails its transaction, at commit.
 */
export class Migration20261124001150_payout_movement_checked_at_commit extends Migration {
  override name = 'Migration20261124001150_payout_movement_checked_at_commit';

  override up(): void {
    this.addSql('alter table pix_payout alter constraint pix_payout_movement_id_fkey deferrable initially deferred');
  }

  override down(): void {
    this.addSql('alter table pix_payout alter constraint pix_payout_movement_id_fkey not deferrable');
  }
}
