import { Migration } from '@mikro-orm/migrations';

export class Migration20261122000600_approvals extends Migration {
  override name = 'Migration20261122000600_approvals';

  override up(): void {
    // An account with an approver holds its payments until that holder approves them.
    this.addSql('alter table account add column approver_holder_id uuid references holder (id)');
    this.addSql(`
      create table approval_request (
        id uuid primary key,
        tenant_id uuid not null references tenant (id),
        account_id uuid not null references account (id),
        requester_holder_id uuid not null references holder (id),
        approver_holder_id uuid not null references holder (id),
        kind text not null check (kind in ('TEV', 'PIX')),
        payload jsonb not null,
        idempotency_key text not null,
        request_hash text not null,
        status text not null check (status in ('PENDING', 'APPROVED', 'EXECUTED', 'FAILED', 'REJECTED', 'EXPIRED')),
        reason text,
        operation_id text,
        expires_at timestamptz not null,
        decided_at timestamptz,
        created_at timestamptz not null default now(),
        unique (account_id, idempotency_key)
      )`);
    this.addSql('create index approval_request_approver_idx on approval_request (approver_holder_id, status, created_at desc, id desc)');
  }

  override down(): void {
    this.addSql('drop table approval_request');
    this.addSql('alter table account drop column approver_holder_id');
  }
}
