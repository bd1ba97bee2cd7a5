import { Migration } from '@mikro-orm/migrations';

/**
 * The sandbox PSP becomes a service of its own (`src/sandbox/psp/`), which reaches the platform only over HTTP. Its
 * tables keep what a PSP knows:
 * - a payout's receiver (ISPB, branch, account) and the charge it pays; `PENDING` while the receiving institution (the
 *   platform itself, for a payment to one of its accounts) has not yet taken or refused the Pix;
 * - every return of a payout in `sandbox_psp_return`, the ones the cents rules schedule included (they were columns of
 *   the payout: moved there, then dropped), so a payout may be returned several times;
 * - the notifications it owes the platform it serves (`sandbox_psp_notification`, sent by its durable sender) and the
 *   sandbox controls (`sandbox_psp_control`), both per platform: several sandbox PSPs, one per test platform, share a
 *   database.
 */
export class Migration20261124000600_sandbox_psp_service extends Migration {
  override name = 'Migration20261124000600_sandbox_psp_service';

  override up(): void {
    this.addSql(`
      alter table sandbox_psp_payout
        add column receiver_ispb text,
        add column receiver_branch text,
        add column receiver_account text,
        add column txid text,
        drop constraint sandbox_psp_payout_outcome_check,
        add constraint sandbox_psp_payout_outcome_check check (outcome in ('PENDING', 'POSTED', 'FAILED', 'CANCELLED'))`);
    this.addSql(`
      insert into sandbox_psp_return (end_to_end_id, original_end_to_end_id, payout_id, amount_cents, returned_at)
      select refund_end_to_end_id, end_to_end_id, payout_id, refund_cents, refunds_at
        from sandbox_psp_payout where refund_cents > 0
      on conflict (end_to_end_id) do nothing`);
    this.addSql('alter table sandbox_psp_payout drop column refund_cents, drop column refund_end_to_end_id, drop column refunds_at');
    this.addSql('create index sandbox_psp_return_payout_idx on sandbox_psp_return (payout_id, returned_at)');
    this.addSql(`
      create table sandbox_psp_notification (
        -- The webhook-id: the same on every retry.
        id text primary key,
        -- The platform's notification URL: each sandbox PSP sends only its own platform's notifications.
        platform_url text not null,
        type text not null check (type in ('payout.settled', 'payout.failed', 'payout.cancelled', 'payout.returned', 'pix.received')),
        payout_id text references sandbox_psp_payout (payout_id),
        -- The exact body signed and sent on every attempt.
        body text not null,
        status text not null default 'PENDING' check (status in ('PENDING', 'DELIVERED', 'REFUSED', 'DROPPED')),
        due_at timestamptz not null,
        attempts integer not null default 0,
        -- A sender that claimed it owns it until then (then another may take it over).
        claimed_until timestamptz,
        last_status integer,
        last_error text,
        created_at timestamptz not null default now(),
        finished_at timestamptz
      )`);
    this.addSql(`create index sandbox_psp_notification_due_idx on sandbox_psp_notification (platform_url, due_at) where status = 'PENDING'`);
    this.addSql('create index sandbox_psp_notification_payout_idx on sandbox_psp_notification (payout_id)');
    this.addSql(`
      create table sandbox_psp_control (
        platform_url text primary key,
        drop_next integer not null default 0 check (drop_next >= 0),
        delay_next integer not null default 0 check (delay_next >= 0),
        delay_ms integer not null default 0 check (delay_ms >= 0)
      )`);
  }

  override down(): void {
    this.addSql('drop table sandbox_psp_control');
    this.addSql('drop table sandbox_psp_notification');
    this.addSql('drop index sandbox_psp_return_payout_idx');
    this.addSql(`
      alter table sandbox_psp_payout
        add column refund_cents bigint not null default 0,
        add column refund_end_to_end_id text,
        add column refunds_at timestamptz`);
    this.addSql(`delete from sandbox_psp_payout where outcome = 'PENDING'`);
    this.addSql(`
      alter table sandbox_psp_payout
        drop column receiver_ispb, drop column receiver_branch, drop column receiver_account, drop column txid,
        drop constraint sandbox_psp_payout_outcome_check,
        add constraint sandbox_psp_payout_outcome_check check (outcome in ('POSTED', 'FAILED', 'CANCELLED'))`);
  }
}
