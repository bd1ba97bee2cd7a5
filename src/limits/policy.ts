/** A tenant's limit policy: its defaults per holder type and channel, and the most a holder may raise each to. */
import type { EntityManager } from '@mikro-orm/postgresql';
import type { HolderType } from '../shared/documents.ts';
import { DomainError, refusals, validationError, type LimitChannel } from '../shared/errors.ts';
import { getTenant } from '../tenants/service.ts';
import { findPolicy, LIMIT_FIELDS, upsertPolicy, type LimitField, type LimitPolicy, type LimitValues } from './store.ts';

/** What an operator sets: some defaults and some maximums; the others keep their values. */
export interface PolicyChange {
  defaults: Partial<LimitValues>;
  maximums: Partial<LimitValues>;
}

/** How the operator names each value (the flags of `limits:set`), in refusals. */
const FLAG: Record<LimitField, string> = { perTransaction: '--per-transaction-cents', day: '--day-cents', night: '--night-cents', month: '--month-cents' };
const maxFlag = (field: LimitField) => FLAG[field].replace('--', '--max-');

/**
 * Sets a tenant's limits for one holder type and channel. A first policy needs all four defaults; its maximums are
 * the defaults unless given (holders may then lower their limits, not raise them). Refused, with nothing changed, when
 * a default is above its maximum, or a night value above its day value.
 */
export async function setLimitPolicy(em: EntityManager, tenantId: string, holderType: HolderType, channel: LimitChannel, change: PolicyChange): Promise<LimitPolicy> {
  await getTenant(em, tenantId);
  const current = await findPolicy(em, tenantId, holderType, channel);
  const given = (values: Partial<LimitValues>) => LIMIT_FIELDS.filter((f) => values[f] !== undefined);
  if (given(change.defaults).length + given(change.maximums).length === 0) throw validationError('Give at least one limit to set');
  let defaults: LimitValues;
  if (current) defaults = { ...current.defaults, ...change.defaults };
  else {
    const missing = LIMIT_FIELDS.filter((f) => change.defaults[f] === undefined);
    if (missing.length > 0) {
      throw validationError(`A tenant's first ${holderType} ${channel} policy needs every default: ${missing.map((f) => FLAG[f]).join(', ')}`);
    }
    defaults = change.defaults as LimitValues;
  }
  const maximums: LimitValues = { ...(current?.maximums ?? defaults), ...change.maximums };

  const above = LIMIT_FIELDS.filter((f) => defaults[f] > maximums[f]).map((f) => `${FLAG[f]} ${defaults[f]} is above ${maxFlag(f)} ${maximums[f]}`);
  if (above.length > 0) throw new DomainError('LIMIT_ABOVE_MAXIMUM', { which: above });
  const nightAboveDay = [
    ...(defaults.night > defaults.day ? [`${FLAG.night} ${defaults.night} is above ${FLAG.day} ${defaults.day}`] : []),
    ...(maximums.night > maximums.day ? [`${maxFlag('night')} ${maximums.night} is above ${maxFlag('day')} ${maximums.day}`] : []),
  ];
  if (nightAboveDay.length > 0) throw new DomainError('NIGHT_LIMIT_ABOVE_DAY', { which: nightAboveDay });

  const policy = { defaults, maximums };
  await upsertPolicy(em, tenantId, holderType, channel, policy);
  return policy;
}
setLimitPolicy.raises = refusals('NOT_FOUND', 'LIMIT_ABOVE_MAXIMUM', 'NIGHT_LIMIT_ABOVE_DAY');
