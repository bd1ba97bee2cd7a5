import { Migration } from '@mikro-orm/migrations';

/**
 * A charge's refund reaches its payer: the sandbox PSP keeps each return (devolução) it was given, and finds the payout
 * that paid the charge by the payment's end-to-end id when the payer is a holder of the platform.
 */
export class Migration20261124000300_charge_refund_reaches_payer extends Migration {
  override name = 'Migration20261124000300_charge_refund_reaches_payer';

  override up(): void {
    this.addSql('create index sandbox_psp_payout_end_to_end_idx on sandbox_psp_payout (end_to_end_id)');
    this.addSql(`
      create table sandbox_psp_return (
        end_to_end_id text primary key,
        original_end_to_end_id text not null,
        -- The payout the returned Pix paid, when its payer is a holder of the platform; null for any other payer.
        payout_id text references sandbox_psp_payout (payout_id),
        amount_cents bigint not null check (amount_cents > 0),
        returned_at timestamptz not null default now()
      )`);
  }

  override down(): void {
    this.addSql('drop table sandbox_psp_return');
    this.addSql('drop index sandbox_psp_payout_end_to_end_idx');
  }
}
