import { Migration } from '@mikro-orm/migrations';

/**
 * What the Pix provider notified (a payout settled, failed, cancelled or returned; an incoming Pix), once per
 * notification id (`webhook-id`): a notification sent again finds its row and is answered the same result. The row is
 * written in the transaction that moves the notification's money, so it exists exactly when the money moved.
 */
export class Migration20261124000400_provider_notifications extends Migration {
  override name = 'Migration20261124000400_provider_notifications';

  override up(): void {
    this.addSql(`
      create table pix_provider_notification (
        id text primary key,
        type text not null check (type in ('payout.settled', 'payout.failed', 'payout.cancelled', 'payout.returned', 'pix.received')),
        -- The end-to-end id the notification is about: the payout's, or the incoming Pix's.
        end_to_end_id text not null,
        -- SHA-256 of the body: the same id with another body is refused, not answered the first one's result.
        body_hash text not null,
        received_at timestamptz not null default now(),
        -- What applying it did; null only inside the transaction that applies it.
        result jsonb
      )`);
    this.addSql('create index pix_provider_notification_end_to_end_idx on pix_provider_notification (end_to_end_id)');
  }

  override down(): void {
    this.addSql('drop table pix_provider_notification');
  }
}
