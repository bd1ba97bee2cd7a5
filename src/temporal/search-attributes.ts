import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

/**
 * Business ids that operators search by in the Temporal UI (e.g. `TenantId = "…" AND TevId = "…"`).
 * Never personal data: no documents, names or e-mails.
 * Imported by workflow code, so this module must stay free of I/O.
 */
export const SearchAttributes = {
  TenantId: defineSearchAttributeKey('TenantId', SearchAttributeType.KEYWORD),
  AccountId: defineSearchAttributeKey('AccountId', SearchAttributeType.KEYWORD),
  HolderId: defineSearchAttributeKey('HolderId', SearchAttributeType.KEYWORD),
  TevId: defineSearchAttributeKey('TevId', SearchAttributeType.KEYWORD),
  PayoutId: defineSearchAttributeKey('PayoutId', SearchAttributeType.KEYWORD),
  ChargeId: defineSearchAttributeKey('ChargeId', SearchAttributeType.KEYWORD),
  ApprovalRequestId: defineSearchAttributeKey('ApprovalRequestId', SearchAttributeType.KEYWORD),
  EventId: defineSearchAttributeKey('EventId', SearchAttributeType.KEYWORD),
  WebhookId: defineSearchAttributeKey('WebhookId', SearchAttributeType.KEYWORD),
} as const;
