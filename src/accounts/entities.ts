import { defineEntity, p, type InferEntity } from '@mikro-orm/core';

export const ACCOUNT_STATUSES = ['PENDING', 'APPROVED', 'REJECTED'] as const;

/** A holder's account, or one of the tenant's own: fee revenue, and settlement (the Pix provider's side of the ledger). */
export const Account = defineEntity({
  name: 'Account',
  tableName: 'account',
  properties: {
    id: p.uuid().primary(),
    tenantId: p.uuid(),
    holderId: p.uuid().nullable(),
    kind: p.enum(['HOLDER', 'FEE_REVENUE', 'SETTLEMENT'] as const),
    bank: p.string(),
    agency: p.string(),
    number: p.string(),
    pixAccountId: p.string(),
    coreAccountId: p.string(),
    status: p.enum(ACCOUNT_STATUSES),
    /** Changed only by the ledger, in the transaction that writes its entries. */
    balanceCents: p.bigint(),
    monthlyGoalCents: p.bigint(),
    /** Dual approval: payments from this account wait for this holder's approval. */
    approverHolderId: p.uuid().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
  },
});
export type Account = InferEntity<typeof Account>;
