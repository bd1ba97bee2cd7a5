import { Migration } from '@mikro-orm/migrations';

/**
 * Pending approval requests follow their account as it is now. A request can be CANCELLED (its account's dual
 * approval was turned off while it waited), and it remembers the approvers it was moved away from when the account's
 * approver was replaced, so that they are refused as such (NOT_APPROVER) rather than not found.
 */
export class Migration20261124000200_approval_follows_account extends Migration {
  override name = 'Migration20261124000200_approval_follows_account';

  override up(): void {
    this.addSql('alter table approval_request drop constraint approval_request_status_check');
    this.addSql(`alter table approval_request add constraint approval_request_status_check
      check (status in ('PENDING', 'APPROVED', 'EXECUTED', 'FAILED', 'REJECTED', 'EXPIRED', 'CANCELLED'))`);
    this.addSql(`alter table approval_request add column former_approver_holder_ids uuid[] not null default '{}'`);
    // Requests left pending by changes made before requests followed their account: each goes to the account's
    // approver now, or is cancelled when the account has none (its run ends at its deadline, keeping CANCELLED).
    this.addSql(`
      update approval_request r
         set former_approver_holder_ids = array_append(r.former_approver_holder_ids, r.approver_holder_id), approver_holder_id = a.approver_holder_id
        from account a
       where a.id = r.account_id and r.status = 'PENDING' and a.approver_holder_id <> r.approver_holder_id`);
    this.addSql(`
      update approval_request r set status = 'CANCELLED', reason = 'DUAL_APPROVAL_DISABLED', decided_at = now()
        from account a
       where a.id = r.account_id and r.status = 'PENDING' and a.approver_holder_id is null`);
  }

  override down(): void {
    // A cancelled request never ran; before this migration, the closest state that never runs is EXPIRED.
    this.addSql(`update approval_request set status = 'EXPIRED' where status = 'CANCELLED'`);
    this.addSql('alter table approval_request drop column former_approver_holder_ids');
    this.addSql('alter table approval_request drop constraint approval_request_status_check');
    this.addSql(`alter table approval_request add constraint approval_request_status_check
      check (status in ('PENDING', 'APPROVED', 'EXECUTED', 'FAILED', 'REJECTED', 'EXPIRED'))`);
  }
}
