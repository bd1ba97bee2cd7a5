import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import type { Router } from 'express';
import { accountIdParams, cents, cuid, tenantHeaders, utcDateTime, uuid } from '../http/common-schemas.ts';
import { defineRoute, type Authenticator } from '../http/route.ts';
import type { HolderAuth } from '../identity/authenticator.ts';
import { pinSchema } from '../identity/pin.ts';
import type { PlatformContext } from '../platform-context.ts';
import type { LimitChannel } from '../shared/errors.ts';
import { centsLimitSchema } from '../shared/money.ts';
import { z } from '../shared/zod.ts';
import { cancelPendingIncrease, changeLimits, readLimits, type AccountLimits } from './service.ts';
import { LIMIT_CHANNELS, LIMIT_FIELDS, type LimitField, type LimitState, type LimitValues, type NightStartHour } from './store.ts';

/** The API's name of each limit: `*Cents`, strings of cents. */
const CENTS_FIELD = { perTransaction: 'perTransactionCents', day: 'dayCents', night: 'nightCents', month: 'monthCents' } as const satisfies Record<LimitField, string>;
const NIGHT_STARTS = ['20:00', '22:00'] as const;
const nightStartOf = (hour: NightStartHour) => (hour === 20 ? '20:00' : '22:00');

const limitValues = (describe: (what: string) => string) =>
  z.object({
    perTransactionCents: cents('500000').nullable().openapi({ description: describe('per transaction') }),
    dayCents: cents('1000000').nullable().openapi({ description: describe('per day period (06:00 to the night start)') }),
    nightCents: cents('100000').nullable().openapi({ description: describe('per night period (the night start to 06:00)') }),
    monthCents: cents('5000000').nullable().openapi({ description: describe('per calendar month') }),
  });

const ChannelLimits = limitValues((what) => `The limit ${what} in force; null: none`)
  .extend({
    maximum: limitValues((what) => `The most this limit ${what} may be raised to; null: no maximum`).openapi({
      description: "The tenant's maximums for this holder type and channel",
    }),
    periodUsedCents: cents('25000').openapi({ description: 'Sent in the current day or night period (`period`)' }),
    periodRemainingCents: cents('975000').nullable().openapi({ description: "What remains of the current period's limit; null: no limit" }),
    monthUsedCents: cents('125000').openapi({ description: 'Sent this calendar month' }),
    monthRemainingCents: cents('4875000').nullable().openapi({ description: "What remains of the month's limit; null: no limit" }),
  })
  .openapi('ChannelLimits');

const requestedValues = z
  .object({
    perTransactionCents: cents('800000').optional(),
    dayCents: cents('2000000').optional(),
    nightCents: cents('200000').optional(),
    monthCents: cents('8000000').optional(),
  })
  .openapi('RequestedLimits');

const PendingIncrease = z
  .object({
    requestId: cuid('l4m8q2x6z0b3n7k1w5r9t2v6').openapi({
      description: 'The request; its workflow is `delayed-effect-limit-increase-<requestId>` (search attributes AccountId and DelayedEffectId)',
    }),
    status: z.literal('PENDING'),
    requestedAt: utcDateTime(),
    effectiveAt: utcDateTime('2026-11-23T13:45:07.123Z').openapi({ description: 'When it is in force, unless cancelled or replaced first' }),
    nightStart: z.enum(NIGHT_STARTS).optional().openapi({ description: 'A later night start, when requested' }),
    pix: requestedValues.optional(),
    tev: requestedValues.optional(),
  })
  .openapi('PendingLimitIncrease');

const Limits = z
  .object({
    accountId: uuid('8c5e2f1a-7b3d-4c9e-a2f6-1d0b9e8c7a65'),
    nightStart: z.enum(NIGHT_STARTS).openapi({ description: 'When the night period starts (America/Sao_Paulo); it ends at 06:00' }),
    period: z.enum(['DAY', 'NIGHT']).openapi({ description: 'The period now, in America/Sao_Paulo' }),
    pix: ChannelLimits,
    tev: ChannelLimits,
    pending: PendingIncrease.nullable().openapi({ description: 'A raise waiting for LIMIT_INCREASE_DELAY; null when none' }),
  })
  .openapi('AccountLimits');

const channelExample = (used: string) => ({
  perTransactionCents: '500000',
  dayCents: '1000000',
  nightCents: '100000',
  monthCents: '5000000',
  maximum: { perTransactionCents: '2000000', dayCents: '5000000', nightCents: '1000000', monthCents: '20000000' },
  periodUsedCents: used,
  periodRemainingCents: (1_000_000n - BigInt(used)).toString(),
  monthUsedCents: used,
  monthRemainingCents: (5_000_000n - BigInt(used)).toString(),
});

const limitsExample = {
  accountId: '8c5e2f1a-7b3d-4c9e-a2f6-1d0b9e8c7a65',
  nightStart: '20:00' as const,
  period: 'DAY' as const,
  pix: channelExample('25000'),
  tev: channelExample('0'),
  pending: {
    requestId: 'l4m8q2x6z0b3n7k1w5r9t2v6',
    status: 'PENDING' as const,
    requestedAt: '2026-11-22T13:45:07.123Z',
    effectiveAt: '2026-11-23T13:45:07.123Z',
    pix: { dayCents: '2000000' },
  },
};

const changeValues = z
  .object({
    perTransactionCents: centsLimitSchema.optional(),
    dayCents: centsLimitSchema.optional(),
    nightCents: centsLimitSchema.optional(),
    monthCents: centsLimitSchema.optional(),
  })
  .strict();

const LimitsChange = z
  .object({
    pin: pinSchema.optional(),
    nightStart: z.enum(NIGHT_STARTS).optional().openapi({ description: '22:00 is a raise (it waits); 20:00 is in force at once' }),
    pix: changeValues.optional().openapi({ description: 'Cents, as strings of digits or JSON integers, 0 or more' }),
    tev: changeValues.optional(),
  })
  .strict()
  .refine((b) => b.nightStart !== undefined || Object.keys(b.pix ?? {}).length > 0 || Object.keys(b.tev ?? {}).length > 0, {
    message: 'give at least one limit or nightStart',
    path: ['pix'],
  })
  .openapi('LimitsChange');

const stateView = (s: LimitState) => {
  const text = (v: bigint | null) => (v === null ? null : v.toString());
  const values = (v: LimitValues<bigint | null>) => Object.fromEntries(LIMIT_FIELDS.map((f) => [CENTS_FIELD[f], text(v[f])])) as Record<(typeof CENTS_FIELD)[LimitField], string | null>;
  const periodLimit = s.period === 'DAY' ? s.inForce.day : s.inForce.night;
  const remaining = (limit: bigint | null, used: bigint) => (limit === null ? null : (limit > used ? limit - used : 0n).toString());
  return {
    ...values(s.inForce),
    maximum: values(s.maximums),
    periodUsedCents: s.periodUsedCents.toString(),
    periodRemainingCents: remaining(periodLimit, s.periodUsedCents),
    monthUsedCents: s.monthUsedCents.toString(),
    monthRemainingCents: remaining(s.inForce.month, s.monthUsedCents),
  };
};

function limitsView(l: AccountLimits) {
  const { PIX: pix, TEV: tev } = l.states;
  const requested = (v: Partial<LimitValues>) => Object.fromEntries(LIMIT_FIELDS.flatMap((f) => (v[f] === undefined ? [] : [[CENTS_FIELD[f], v[f].toString()]])));
  const p = l.pending;
  return {
    accountId: l.accountId,
    nightStart: nightStartOf(pix.nightStartHour),
    period: pix.period,
    pix: stateView(pix),
    tev: stateView(tev),
    pending: p && {
      requestId: p.id,
      status: 'PENDING' as const,
      requestedAt: p.requestedAt,
      effectiveAt: p.effectiveAt,
      ...(p.nightStartHour === null ? {} : { nightStart: nightStartOf(p.nightStartHour) }),
      ...(Object.keys(p.values.PIX).length > 0 ? { pix: requested(p.values.PIX) } : {}),
      ...(Object.keys(p.values.TEV).length > 0 ? { tev: requested(p.values.TEV) } : {}),
    },
  };
}

const changeOf = (body: z.infer<typeof LimitsChange>) => {
  const values = (v: z.infer<typeof changeValues> | undefined) =>
    Object.fromEntries(LIMIT_FIELDS.flatMap((f) => (v?.[CENTS_FIELD[f]] === undefined ? [] : [[f, v[CENTS_FIELD[f]]!]]))) as Partial<LimitValues>;
  const byChannel: Record<LimitChannel, Partial<LimitValues>> = { PIX: values(body.pix), TEV: values(body.tev) };
  return {
    ...(body.nightStart ? { nightStartHour: (body.nightStart === '20:00' ? 20 : 22) as NightStartHour } : {}),
    values: Object.fromEntries(LIMIT_CHANNELS.map((c) => [c, byChannel[c]])),
  };
};

export function registerLimitRoutes(router: Router, registry: OpenAPIRegistry, platform: PlatformContext, auth: Authenticator<HolderAuth>): void {
  defineRoute(router, registry, {
    method: 'get',
    path: '/accounts/:accountId/limits',
    operationId: 'getLimits',
    tags: ['Limits'],
    summary: "The account's transaction limits: in force, used and remaining now, the night start, a pending raise",
    headers: tenantHeaders,
    auth,
    params: accountIdParams,
    responses: { 200: { description: "The account's limits", schema: Limits, example: limitsExample } },
    raises: [readLimits],
    async handler({ auth: a, params }) {
      return { status: 200, body: limitsView(await readLimits(a, params.accountId)) };
    },
  });

  defineRoute(router, registry, {
    method: 'put',
    path: '/accounts/:accountId/limits',
    operationId: 'changeLimits',
    tags: ['Limits'],
    summary: 'Change limits (PIN): lowering is at once, raising waits LIMIT_INCREASE_DELAY and replaces a pending raise',
    description:
      'Each value given at or below the one in force, and an earlier night start (20:00), are in force at once. Each value above it, up to ' +
      "the tenant's maximum, and a later night start (22:00), wait in one request, in force `pending.effectiveAt` (LIMIT_INCREASE_DELAY " +
      'after the request) unless cancelled first. A change replaces the pending request, if any: what it does not ask for again is ' +
      'dropped. A night limit may not be above its day limit.',
    headers: tenantHeaders,
    auth,
    params: accountIdParams,
    body: LimitsChange,
    bodyExample: { pin: '2580', nightStart: '22:00', pix: { dayCents: '2000000', nightCents: '50000' } },
    responses: { 200: { description: 'The limits with the change: lowered values in force, raises pending', schema: Limits, example: limitsExample } },
    raises: [changeLimits],
    async handler({ auth: a, params, body }) {
      return { status: 200, body: limitsView(await changeLimits(platform, a, params.accountId, body.pin, changeOf(body))) };
    },
  });

  defineRoute(router, registry, {
    method: 'delete',
    path: '/accounts/:accountId/limits/pending',
    operationId: 'cancelLimitIncrease',
    tags: ['Limits'],
    summary: 'Cancel the pending raise; the limits in force stay as they are',
    description: 'Needs no PIN: cancelling only keeps the account as restricted as it is.',
    headers: tenantHeaders,
    auth,
    params: accountIdParams,
    responses: { 200: { description: 'The limits, with nothing pending', schema: Limits, example: { ...limitsExample, pending: null } } },
    raises: [cancelPendingIncrease],
    async handler({ auth: a, params }) {
      return { status: 200, body: limitsView(await cancelPendingIncrease(platform, a, params.accountId)) };
    },
  });
}
