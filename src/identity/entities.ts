import { defineEntity, p, type InferEntity } from '@mikro-orm/core';

export const HOLDER_STATUSES = ['PENDING', 'ACTIVE', 'BLOCKED', 'CLOSED'] as const;
export const ONBOARDING_STEPS = ['PENDING', 'IN_PROGRESS', 'DONE', 'REJECTED'] as const;

export const Holder = defineEntity({
  name: 'Holder',
  tableName: 'holder',
  properties: {
    id: p.uuid().primary(),
    tenantId: p.uuid(),
    type: p.enum(['PERSON', 'COMPANY'] as const),
    name: p.string(),
    document: p.string(),
    email: p.string(),
    emailConfirmed: p.boolean(),
    phone: p.string().nullable(),
    phoneConfirmed: p.boolean(),
    passwordHash: p.string().hidden(),
    status: p.enum(HOLDER_STATUSES),
    onboardingStep: p.enum(ONBOARDING_STEPS),
    onboardingRequisitionId: p.bigint('number'),
    kyc: p.json<Record<string, unknown>>().nullable(),
    pinHash: p.string().nullable().hidden(),
    pinFailedAttempts: p.integer(),
    pinLockedAt: p.datetime().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p.datetime().onCreate(() => new Date()).onUpdate(() => new Date()),
  },
});
export type Holder = InferEntity<typeof Holder>;
