import { Migration } from '@mikro-orm/migrations';

export class Migration20261122000500_webhooks extends Migration {
  override name = 'Migration20261122000500_webhooks';

  override up(): void {
    this.addSql(`
      create table webhook_endpoint (
        id text primary key,
        tenant_id uuid not null references tenant (id),
        account_id uuid not null references account (id),
        pix_account_id text not null,
        url text not null,
        events text[] not null check (cardinality(events) > 0),
        -- AES-256-GCM: delivery needs the token itself, so it is encrypted rather than hashed.
        auth_token_ciphertext text not null,
        core_endpoint_id text,
        enabled boolean not null default true,
        idempotency_key text not null,
        request_hash text not null,
        created_at timestamptz not null default now(),
        disabled_at timestamptz,
        unique (account_id, idempotency_key)
      )`);
    this.addSql('create index webhook_endpoint_listing_idx on webhook_endpoint (pix_account_id, created_at desc, id desc)');
    this.addSql(`
      create table webhook_delivery (
        id text primary key,
        event_id uuid not null references event_outbox (id),
        endpoint_id text not null references webhook_endpoint (id),
        status text not null check (status in ('PENDING', 'DELIVERED', 'FAILED', 'CANCELLED')),
        attempts integer not null default 0,
        workflow_started_at timestamptz,
        created_at timestamptz not null default now(),
        finished_at timestamptz,
        unique (event_id, endpoint_id)
      )`);
    this.addSql(`create index webhook_delivery_unstarted_idx on webhook_delivery (created_at) where workflow_started_at is null`);
    this.addSql('create index webhook_delivery_endpoint_idx on webhook_delivery (endpoint_id, status)');
    this.addSql(`
      create table webhook_attempt (
        id text primary key,
        delivery_id text not null references webhook_delivery (id),
        attempt integer not null,
        attempted_at timestamptz not null,
        status_code integer,
        duration_ms integer not null,
        error text
      )`);
    this.addSql('create index webhook_attempt_delivery_idx on webhook_attempt (delivery_id, attempted_at)');
    // Wakes the outbox relay as soon as an event commits (it also sweeps periodically, so a missed notice only delays).
    this.addSql(`
      create function notify_event_outbox() returns trigger language plpgsql as $$
      begin
        perform pg_notify('event_outbox', '');
        return null;
      end $$`);
    this.addSql('create trigger event_outbox_notify after insert on event_outbox for each statement execute function notify_event_outbox()');
  }

  override down(): void {
    this.addSql('drop trigger event_outbox_notify on event_outbox');
    this.addSql('drop function notify_event_outbox');
    this.addSql('drop table webhook_attempt');
    this.addSql('drop table webhook_delivery');
    this.addSql('drop table webhook_endpoint');
  }
}
