/**
 * A holder's transaction limits (issue 25): what is in force and used, and the holder's changes. Lowering a limit, or
 * starting the night earlier, is in force at once; raising one (up to the tenant's maximum), or starting the night
 * later, is a request in force LIMIT_INCREASE_DELAY hours later, through a run of the delayed-effect workflow
 * (LIMIT_INCREASE), unless the holder cancels it or a newer change replaces it. The limits themselves are enforced by
 * the posting functions (`check_and_count_limits`).
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Account } from '../accounts/entities.ts';
import { getOwnAccount } from '../accounts/service.ts';
import { insertHandOffs } from '../handoff/store.ts';
import type { HolderAuth } from '../identity/authenticator.ts';
import { checkPin } from '../identity/pin.ts';
import type { PlatformContext } from '../platform-context.ts';
import type { HolderType } from '../shared/documents.ts';
import { DomainError, notFound, refusals, type ErrorDetail, type LimitChannel } from '../shared/errors.ts';
import { newCuid } from '../shared/ids.ts';
import { delayedEffectCancelledWake, delayedEffectStart, type DelayedEffectOutcome, type DelayedEffectRun } from '../../workflows/contracts/delayed-effect.ts';
import {
  closeChangeRequest,
  findPendingRequest,
  insertChangeRequest,
  LIMIT_CHANNELS,
  LIMIT_FIELDS,
  limitStates,
  lockAccountSettings,
  lockChangeRequest,
  markReplacedBy,
  saveAccountSettings,
  type AccountLimitSettings,
  type LimitChangeRequest,
  type LimitState,
  type LimitValues,
  type NightStartHour,
} from './store.ts';

/** An account's limits as the holder reads them: each channel's state now, and the pending request. */
export interface AccountLimits {
  accountId: string;
  states: Record<LimitChannel, LimitState>;
  pending: LimitChangeRequest | null;
}

/** A holder's change: each value it sets, per channel, and the night start; what it leaves out stays as it is. */
export interface LimitChange {
  nightStartHour?: NightStartHour;
  values: Partial<Record<LimitChannel, Partial<LimitValues>>>;
}

/** The path of a value in the request body, for `details`. */
const PATH: Record<LimitChannel, string> = { PIX: 'body.pix', TEV: 'body.tev' };
const FIELD_NAME = { perTransaction: 'perTransactionCents', day: 'dayCents', night: 'nightCents', month: 'monthCents' } as const;
const pathOf = (channel: LimitChannel, field: keyof typeof FIELD_NAME) => `${PATH[channel]}.${FIELD_NAME[field]}`;
const describe = (d: ErrorDetail) => `${d.path} ${d.message}`;

/** The request's delayed-effect run (`delayed-effect-limit-increase-<requestId>`): found by its account and its id. */
const runOf = (r: LimitChangeRequest): DelayedEffectRun => ({ kind: 'LIMIT_INCREASE', recordId: r.id, tenantId: r.tenantId, accountId: r.accountId, effectiveAt: r.effectiveAt });

async function limitsOf(em: EntityManager, account: Account, holderType: HolderType): Promise<AccountLimits> {
  return { accountId: account.id, states: await limitStates(em, account.tenantId, account.id, holderType), pending: await findPendingRequest(em, account.id) };
}

/** The caller's account's limits: values in force, used and remaining in the current periods, night start, pending request. */
export async function readLimits(auth: HolderAuth, accountId: string): Promise<AccountLimits> {
  const account = await getOwnAccount(auth.em, auth.holder, accountId);
  return limitsOf(auth.em, account, auth.holder.type);
}
readLimits.raises = refusals(getOwnAccount);

/**
 * The holder's change, with the PIN. Each value at or below the one in force is in force at once; each above it (at
 * most the tenant's maximum) waits in a new request, as does a later night start. Whatever the change, a request
 * still pending is replaced by it. Refused, with nothing changed, when a value is above the tenant's maximum or would
 * leave a night limit above its channel's day limit.
 */
export async function changeLimits(platform: PlatformContext, auth: HolderAuth, accountId: string, pin: string | undefined, change: LimitChange): Promise<AccountLimits> {
  const account = await getOwnAccount(auth.em, auth.holder, accountId);
  await checkPin(auth, platform.config, pin);
  const { config, orm } = platform;
  await orm.em.fork().transactional(async (em) => {
    const settings = await lockAccountSettings(em, account.tenantId, account.id);
    const states = await limitStates(em, account.tenantId, account.id, auth.holder.type);
    const plan = planChange(settings, states, change);
    await saveAccountSettings(em, account.id, plan.now);
    const handOffs = [];
    const replaced = await findPendingRequest(em, account.id);
    if (replaced) {
      await closeChangeRequest(em, replaced.id, 'REPLACED');
      handOffs.push(delayedEffectCancelledWake(runOf(replaced)));
    }
    if (plan.increase) {
      const request = await insertChangeRequest(em, {
        id: newCuid(),
        tenantId: account.tenantId,
        accountId: account.id,
        ...plan.increase,
        effectiveAt: new Date(Date.now() + config.LIMIT_INCREASE_DELAY * 3_600_000).toISOString(),
      });
      if (replaced) await markReplacedBy(em, replaced.id, request.id);
      handOffs.push(delayedEffectStart(runOf(request)));
    }
    // Due at once, and left to the worker's reconciler: no Temporal call on the request path.
    await insertHandOffs(em, config.TEMPORAL_TASK_QUEUE, handOffs, { dueNow: true });
  });
  return limitsOf(orm.em.fork(), account, auth.holder.type);
}
changeLimits.raises = refusals(getOwnAccount, checkPin, 'LIMIT_ABOVE_MAXIMUM', 'NIGHT_LIMIT_ABOVE_DAY');

interface ChangePlan {
  /** The account's settings with what is in force at once. */
  now: AccountLimitSettings;
  /** What waits for the delay, or null when nothing is raised. */
  increase: Pick<LimitChangeRequest, 'nightStartHour' | 'values'> | null;
}

/** Splits a change into what is in force at once and what waits, refusing what the tenant's policy does not allow. */
function planChange(settings: AccountLimitSettings, states: Record<LimitChannel, LimitState>, change: LimitChange): ChangePlan {
  const now: AccountLimitSettings = { nightStartHour: settings.nightStartHour, values: { PIX: { ...settings.values.PIX }, TEV: { ...settings.values.TEV } } };
  const raised: LimitChangeRequest['values'] = { PIX: {}, TEV: {} };
  const aboveMaximum: ErrorDetail[] = [];
  for (const channel of LIMIT_CHANNELS) {
    const { inForce, maximums } = states[channel];
    for (const field of LIMIT_FIELDS) {
      const value = change.values[channel]?.[field];
      if (value === undefined) continue;
      const maximum = maximums[field];
      if (maximum !== null && value > maximum) aboveMaximum.push({ path: pathOf(channel, field), message: `at most ${maximum} cents` });
      // No limit in force is above any value: setting one lowers it.
      else if (inForce[field] === null || value <= inForce[field]) now.values[channel][field] = value;
      else raised[channel][field] = value;
    }
  }
  if (aboveMaximum.length > 0) throw new DomainError('LIMIT_ABOVE_MAXIMUM', { which: aboveMaximum.map(describe) }, aboveMaximum);

  let laterNight: NightStartHour | null = null;
  if (change.nightStartHour !== undefined && change.nightStartHour !== settings.nightStartHour) {
    if (change.nightStartHour < settings.nightStartHour) now.nightStartHour = change.nightStartHour;
    else laterNight = change.nightStartHour;
  }

  // Night within day, as things will stand once the increase is in force too (and so at once: an increase only
  // widens a value, and a value lowered now stays so). A value not changed stays as it is in force.
  const nightAboveDay: ErrorDetail[] = [];
  for (const channel of LIMIT_CHANNELS) {
    const after = (field: 'day' | 'night') => raised[channel][field] ?? change.values[channel]?.[field] ?? states[channel].inForce[field];
    const day = after('day');
    const night = after('night');
    if (day !== null && (night === null || night > day)) {
      nightAboveDay.push({ path: pathOf(channel, 'night'), message: night === null ? `no night limit while the day limit is ${day} cents` : `${night} cents is above the day limit of ${day} cents` });
    }
  }
  if (nightAboveDay.length > 0) throw new DomainError('NIGHT_LIMIT_ABOVE_DAY', { which: nightAboveDay.map(describe) }, nightAboveDay);

  const anyRaised = laterNight !== null || LIMIT_CHANNELS.some((channel) => Object.keys(raised[channel]).length > 0);
  return { now, increase: anyRaised ? { nightStartHour: laterNight, values: raised } : null };
}

/** Cancels the account's pending request; the limits stay as they are. 404 when nothing is pending. */
export async function cancelPendingIncrease(platform: PlatformContext, auth: HolderAuth, accountId: string): Promise<AccountLimits> {
  const account = await getOwnAccount(auth.em, auth.holder, accountId);
  const { config, orm } = platform;
  await orm.em.fork().transactional(async (em) => {
    await lockAccountSettings(em, account.tenantId, account.id);
    const pending = await findPendingRequest(em, account.id);
    if (!pending) throw notFound('Pending limit increase');
    await closeChangeRequest(em, pending.id, 'CANCELLED');
    await insertHandOffs(em, config.TEMPORAL_TASK_QUEUE, [delayedEffectCancelledWake(runOf(pending))], { dueNow: true });
  });
  return limitsOf(orm.em.fork(), account, auth.holder.type);
}
cancelPendingIncrease.raises = refusals(getOwnAccount, 'NOT_FOUND');

/**
 * The delayed-effect workflow's step at the request's time: a request still pending is put in force, once (its row
 * locked, then APPLIED); one applied already answers APPLIED, one cancelled or replaced meanwhile CANCELLED. A value
 * the tenant's maximum has fallen below since is in force at the maximum (`limit_state` never reads a value above it).
 */
export async function applyLimitIncrease(em: EntityManager, requestId: string): Promise<DelayedEffectOutcome> {
  return em.transactional(async (tx) => {
    const request = await lockChangeRequest(tx, requestId);
    // Its hand-off commits with the request: a run for a request that does not exist is a defect, retried in view.
    if (!request) throw new Error(`unknown limit change request ${requestId}`);
    if (request.status !== 'PENDING') return request.status === 'APPLIED' ? 'APPLIED' : 'CANCELLED';
    const settings = await lockAccountSettings(tx, request.tenantId, request.accountId);
    if (request.nightStartHour !== null) settings.nightStartHour = request.nightStartHour;
    for (const channel of LIMIT_CHANNELS) Object.assign(settings.values[channel], request.values[channel]);
    await saveAccountSettings(tx, request.accountId, settings);
    await closeChangeRequest(tx, request.id, 'APPLIED');
    return 'APPLIED';
  });
}
