import { Migration20261122000100_tenants } from './Migration20261122000100_tenants.ts';
import { Migration20261122000200_holders_accounts } from './Migration20261122000200_holders_accounts.ts';
import { Migration20261122000300_ledger } from './Migration20261122000300_ledger.ts';
import { Migration20261122000400_transfers } from './Migration20261122000400_transfers.ts';
import { Migration20261122000500_webhooks } from './Migration20261122000500_webhooks.ts';
import { Migration20261122000600_approvals } from './Migration20261122000600_approvals.ts';
import { Migration20261122000700_pix_payouts } from './Migration20261122000700_pix_payouts.ts';
import { Migration20261122000800_charges } from './Migration20261122000800_charges.ts';
import { Migration20261122000900_workflow_handoff } from './Migration20261122000900_workflow_handoff.ts';
import { Migration20261122001000_tev_settlement } from './Migration20261122001000_tev_settlement.ts';
import { Migration20261122001100_event_relay_cursor } from './Migration20261122001100_event_relay_cursor.ts';
import { Migration20261122001200_webhook_endpoint_delivery } from './Migration20261122001200_webhook_endpoint_delivery.ts';
import { Migration20261122001300_tev_settlement_batch } from './Migration20261122001300_tev_settlement_batch.ts';
import { Migration20261124000100_function_sources } from './Migration20261124000100_function_sources.ts';
import { Migration20261124000200_approval_follows_account } from './Migration20261124000200_approval_follows_account.ts';
import { Migration20261124000300_charge_refund_reaches_payer } from './Migration20261124000300_charge_refund_reaches_payer.ts';
import { Migration20261124000400_provider_notifications } from './Migration20261124000400_provider_notifications.ts';
import { Migration20261124000500_mask_payer_visible_cpf } from './Migration20261124000500_mask_payer_visible_cpf.ts';
import { Migration20261124000600_sandbox_psp_service } from './Migration20261124000600_sandbox_psp_service.ts';
import { Migration20261124000800_unsettled_payout_index } from './Migration20261124000800_unsettled_payout_index.ts';
import { Migration20261124000900_posting_types } from './Migration20261124000900_posting_types.ts';
import { Migration20261124000950_tev_request_hash } from './Migration20261124000950_tev_request_hash.ts';
import { Migration20261124001000_transaction_limits } from './Migration20261124001000_transaction_limits.ts';
import { Migration20261124001100_trusted_contacts } from './Migration20261124001100_trusted_contacts.ts';
import { Migration20261124001150_payout_movement_checked_at_commit } from './Migration20261124001150_payout_movement_checked_at_commit.ts';
import { Migration20261124001200_scheduled_payments } from './Migration20261124001200_scheduled_payments.ts';
import { Migration20261124001300_payment_batches } from './Migration20261124001300_payment_batches.ts';
import { Migration20261125001400_receipts } from './Migration20261125001400_receipts.ts';
import { Migration20261125001500_limit_usage_unchecked } from './Migration20261125001500_limit_usage_unchecked.ts';
import { Migration20261125001510_limit_usage_fillfactor } from './Migration20261125001510_limit_usage_fillfactor.ts';
import { Migration20261129001600_compact_enumeration_checks } from './Migration20261129001600_compact_enumeration_checks.ts';
import { Migration20261129001700_relay_passes_running_transactions } from './Migration20261129001700_relay_passes_running_transactions.ts';

/** Every schema change, in order. New migrations are appended here. */
export const migrations = [
  Migration20261122000100_tenants,
  Migration20261122000200_holders_accounts,
  Migration20261122000300_ledger,
  Migration20261122000400_transfers,
  Migration20261122000500_webhooks,
  Migration20261122000600_approvals,
  Migration20261122000700_pix_payouts,
  Migration20261122000800_charges,
  Migration20261122000900_workflow_handoff,
  Migration20261122001000_tev_settlement,
  Migration20261122001100_event_relay_cursor,
  Migration20261122001200_webhook_endpoint_delivery,
  Migration20261122001300_tev_settlement_batch,
  Migration20261124000100_function_sources,
  Migration20261124000200_approval_follows_account,
  Migration20261124000300_charge_refund_reaches_payer,
  Migration20261124000400_provider_notifications,
  Migration20261124000500_mask_payer_visible_cpf,
  Migration20261124000600_sandbox_psp_service,
  Migration20261124000800_unsettled_payout_index,
  Migration20261124000900_posting_types,
  Migration20261124000950_tev_request_hash,
  Migration20261124001000_transaction_limits,
  Migration20261124001100_trusted_contacts,
  Migration20261124001150_payout_movement_checked_at_commit,
  Migration20261124001200_scheduled_payments,
  Migration20261124001300_payment_batches,
  Migration20261125001400_receipts,
  Migration20261125001500_limit_usage_unchecked,
  Migration20261125001510_limit_usage_fillfactor,
  Migration20261129001600_compact_enumeration_checks,
  Migration20261129001700_relay_passes_running_transactions,
];
