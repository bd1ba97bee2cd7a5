import { defineEntity, p, type InferEntity } from '@mikro-orm/core';

export const ACCOUNT_STATUSES = ['PENDING', 'APPROVED', 'REJECTED'] as const;

/** Why money may not move out of or into a holder's account, in the order the rule (`account_refusal`) gives them. */
export const MONEY_REFUSALS = ['HOLDER_BLOCKED', 'ONBOARDING_INCOMPLETE', 'ACCOUNT_NOT_APPROVED'] as const;

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
    /**
     * Why money may not move out of or into this account now, or null: the ledger's rule (`account_refusal`, src/ledger/sql/rules.sql), read in the query
     * that loads the account.
     */
    moneyRefusal: p
      .enum(MONEY_REFUSALS)
      .nullable()
      .formula((cols) => `(select account_refusal(${cols.status}, h.status, h.onboarding_step) from (select) one left join holder h on h.id = ${cols.holderId})`),
    createdAt: p.datetime().onCreate(() => new Date()),
  },
});
export type Account = InferEntity<typeof Account>;
