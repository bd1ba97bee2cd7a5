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
  /**
   * The record a delayed-effect workflow changes, whatever its kind: a contact waiting to be trusted, a limit request
   * waiting to take effect. One key for every kind: the Temporal server's SQL visibility stores (SQLite in the dev
   * server, PostgreSQL) hold at most 10 custom Keyword attributes per namespace, and this is the tenth.
   */
  DelayedEffectId: defineSearchAttributeKey('DelayedEffectId', SearchAttributeType.KEYWORD),
  /*
   * The Keyword slots are all taken: later business ids are KeywordList attributes (3 more slots in the same stores).
   * A workflow sets one value, and the UI's `ScheduleId = "…"` finds it as it would a Keyword.
   */
  /** A scheduled (or recurring) payment's workflow. */
  ScheduleId: defineSearchAttributeKey('ScheduleId', SearchAttributeType.KEYWORD_LIST),
  /** A batch payout's parent workflow. */
  BatchId: defineSearchAttributeKey('BatchId', SearchAttributeType.KEYWORD_LIST),
} as const;
