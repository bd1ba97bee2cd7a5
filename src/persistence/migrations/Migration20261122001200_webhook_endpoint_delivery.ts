import { Migration } from '@mikro-orm/migrations';

/**
 * Webhook delivery in batches by one workflow per endpoint: each delivery carries when its next attempt is due, and
 * a redelivery starts a new round of attempts. Each round records at most one successful attempt.
 */
export class Migration20261122001200_webhook_endpoint_delivery extends Migration {
  override name = 'Migration20261122001200_webhook_endpoint_delivery';

  override up(): void {
    this.addSql(`alter table webhook_delivery add column next_attempt_at timestamptz`);
    this.addSql(`alter table webhook_delivery add column first_attempt_at timestamptz`);
    this.addSql(`alter table webhook_delivery add column round integer not null default 1`);
    this.addSql(`update webhook_delivery set next_attempt_at = now() where status = 'PENDING'`);
    // What an endpoint's workflow claims: its due deliveries, oldest first.
    this.addSql(`create index webhook_delivery_due_idx on webhook_delivery (endpoint_id, next_attempt_at) where status = 'PENDING'`);
    this.addSql(`drop index webhook_delivery_endpoint_idx`);
    // The integrator's delivery log pages an endpoint's deliveries, newest first.
    this.addSql(`create index webhook_delivery_log_idx on webhook_delivery (endpoint_id, created_at desc, id desc)`);
    this.addSql(`alter table webhook_attempt add column round integer not null default 1`);
    this.addSql(`create unique index webhook_attempt_one_success on webhook_attempt (delivery_id, round) where error is null`);
  }

  override down(): void {
    this.addSql('drop index webhook_attempt_one_success');
    this.addSql('alter table webhook_attempt drop column round');
    this.addSql('drop index webhook_delivery_log_idx');
    this.addSql('create index webhook_delivery_endpoint_idx on webhook_delivery (endpoint_id, status)');
    this.addSql('drop index webhook_delivery_due_idx');
    this.addSql('alter table webhook_delivery drop column round');
    this.addSql('alter table webhook_delivery drop column first_attempt_at');
    this.addSql('alter table webhook_delivery drop column next_attempt_at');
  }
}
