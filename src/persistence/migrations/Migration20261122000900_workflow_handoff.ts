import { Migration } from '@mikro-orm/migrations';

/**
 * The durable hand-off to Temporal: a row says "this workflow must run" (or "must be woken with this signal"). It is
 * written in the transaction that records the operation, so the work cannot be lost between PostgreSQL and Temporal.
 * The writer starts the workflow at once and deletes the row; the worker's reconciler starts whatever is left.
 */
export class Migration20261122000900_workflow_handoff extends Migration {
  override name = 'Migration20261122000900_workflow_handoff';

  override up(): void {
    this.addSql(`
      create table workflow_start (
        -- The workflow id; for a wake (signal-with-start), the workflow id and the signal name.
        key text primary key,
        task_queue text not null,
        workflow_type text not null,
        workflow_id text not null,
        args jsonb not null,
        search_attributes jsonb not null,
        reuse_policy text not null check (reuse_policy in ('REJECT_DUPLICATE', 'ALLOW_DUPLICATE_FAILED_ONLY', 'ALLOW_DUPLICATE')),
        signal text,
        signal_args jsonb,
        -- A wake requested again while one is being sent bumps the version, so it is sent again.
        version integer not null default 1,
        attempts integer not null default 0,
        last_error text,
        created_at timestamptz not null default now(),
        -- The writer gets a head start to start it itself before the reconciler looks.
        next_attempt_at timestamptz not null default now() + interval '2 seconds'
      )`);
    this.addSql('create index workflow_start_due_idx on workflow_start (task_queue, next_attempt_at)');
    // Deliveries are handed off like every other workflow now.
    this.addSql('alter table webhook_delivery drop column workflow_started_at');
  }

  override down(): void {
    this.addSql('alter table webhook_delivery add column workflow_started_at timestamptz');
    this.addSql('drop table workflow_start');
  }
}
