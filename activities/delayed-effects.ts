import type { EntityManager } from '@mikro-orm/postgresql';
import { trustContact } from '../src/contacts/trust.ts';
import { applyLimitIncrease } from '../src/limits/service.ts';
import type { DelayedEffectKind, DelayedEffectOutcome } from '../workflows/contracts/delayed-effect.ts';
import type { ActivityDeps } from './deps.ts';

/** Each kind's apply: a use case of the module that owns the record, idempotent (it applies a pending record only). */
const APPLY: { readonly [K in DelayedEffectKind]: (em: EntityManager, recordId: string) => Promise<DelayedEffectOutcome> } = {
  TRUSTED_CONTACT: trustContact,
  LIMIT_INCREASE: applyLimitIncrease,
};

export function delayedEffectActivities({ orm }: ActivityDeps) {
  return {
    /** Applies the change of the record, once: APPLIED (now or before), or CANCELLED when it is no longer pending. */
    applyDelayedEffect: (kind: DelayedEffectKind, recordId: string): Promise<DelayedEffectOutcome> => APPLY[kind](orm.em.fork(), recordId),
  };
}
export type DelayedEffectActivities = ReturnType<typeof delayedEffectActivities>;
