import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { randomUUID } from 'node:crypto';
import type { Router } from 'express';
import { getOwnAccount } from '../accounts/service.ts';
import { pixAccountParams } from '../fees/routes.ts';
import { accountIdParams, accountNumber, branch, cents, cuid, paginated, tenantHeaders, utcDateTime, uuid } from '../http/common-schemas.ts';
import { defineRoute, type Authenticator } from '../http/route.ts';
import type { HolderAuth } from '../identity/authenticator.ts';
import { operatingAccount, operatingPixAccount } from '../identity/operating-account.ts';
import { pinSchema } from '../identity/pin.ts';
import type { PaymentContext } from '../payments/context.ts';
import { pixKeyTypeSchema, validatePixKey, type PixKeyType } from '../pix/keys.ts';
import { idempotencyKey } from '../shared/idempotency.ts';
import { centsAmountSchema } from '../shared/money.ts';
import { pageQuery } from '../shared/pagination.ts';
import { z } from '../shared/zod.ts';
import { scopedAccount, type IntegrationAuth } from '../tenants/api-key-auth.ts';
import { description } from '../transfers/schemas.ts';
import { HORIZON_YEARS } from './recurrence.ts';
import { cancelOccurrence, cancelSchedule, listSchedules, readSchedule, schedulePayment, schedulePaymentAsHolder, type ScheduleDetail, type ScheduleRequest } from './service.ts';
import type { Schedule } from './store.ts';

/** Five years of weekly dates. */
const MAX_COUNT = 262;

const isoDate = (what: string) => z.iso.date({ error: 'must be a calendar date, YYYY-MM-DD' }).openapi({ description: what, example: '2026-12-05' });

const Recurrence = z
  .object({
    frequency: z.enum(['WEEKLY', 'MONTHLY']).openapi({ description: 'WEEKLY: on the weekday of `date`; MONTHLY: on `dayOfMonth` (the day of `date` by default)' }),
    dayOfMonth: z
      .number()
      .int('must be a whole number')
      .min(1)
      .max(31)
      .optional()
      .openapi({ description: "MONTHLY only: 1 to 31; in a month without that day, the month's last day (31 → 30 April, 28 or 29 February)", example: 31 }),
    count: z.number().int('must be a whole number').min(1).max(MAX_COUNT).optional().openapi({ description: 'How many occurrences (or give `until`)', example: 12 }),
    until: isoDate('The last date an occurrence may fall on (or give `count`)').optional(),
  })
  .refine((r) => (r.count === undefined) !== (r.until === undefined), { message: 'give exactly one of count and until', path: ['count'] })
  .refine((r) => r.dayOfMonth === undefined || r.frequency === 'MONTHLY', { message: 'only for a MONTHLY recurrence', path: ['dayOfMonth'] })
  .openapi('ScheduledPaymentRecurrence', { description: `Repeats the payment from \`date\`; every occurrence at most ${HORIZON_YEARS} years from today` });

const when = {
  amountCents: centsAmountSchema.openapi({ description: 'cents: a string of digits or a JSON integer, greater than 0' }),
  description: description.optional(),
  date: isoDate('São Paulo calendar date of the payment (the first, for a recurrence); with `time`, in the future'),
  time: z
    .string()
    .regex(/^([01]\d|2[0-3]):[0-5]\d(:[0-5]\d)?$/, 'must be HH:MM (or HH:MM:SS), 24 h')
    .default('06:00')
    .openapi({ description: 'São Paulo time of day the payment is due; 06:00 by default', example: '06:00' }),
  recurrence: Recurrence.optional(),
};

type When = { amountCents: bigint; description?: string | undefined; date: string; time: string; recurrence?: z.infer<typeof Recurrence> | undefined };
type Target = { kind: 'PIX_KEY'; pixKey: string; pixKeyType: PixKeyType } | { kind: 'TEV'; branch: string; account: string };

/** The request as the use case takes it: a key validated and in canonical form, the time with its seconds. */
function toRequest<B extends When & Target>(body: B, ctx: z.RefinementCtx): { body: B; request: ScheduleRequest } {
  let target: ScheduleRequest['target'];
  if (body.kind === 'TEV') target = { kind: 'TEV', branch: body.branch, account: body.account };
  else {
    const check = validatePixKey(body.pixKeyType, body.pixKey);
    if (!check.ok) {
      ctx.addIssue({ code: 'custom', path: ['pixKey'], message: `invalid ${body.pixKeyType} Pix key: ${check.reason}` });
      return z.NEVER;
    }
    target = { kind: 'PIX_KEY', pixKey: check.key, pixKeyType: body.pixKeyType };
  }
  const r = body.recurrence;
  return {
    body,
    request: {
      target,
      amountCents: body.amountCents,
      description: body.description ?? null,
      rule: {
        date: body.date,
        time: body.time.length === 5 ? `${body.time}:00` : body.time,
        recurrence: r ? { frequency: r.frequency, dayOfMonth: r.dayOfMonth ?? null, count: r.count ?? null, until: r.until ?? null } : null,
      },
    },
  };
}

/** The receiver: a Pix key, or an account of the tenant by branch and number (as the TEV beneficiary lookup gives it). */
const pixKeyTarget = {
  kind: z.literal('PIX_KEY'),
  pixKey: z.string().max(100).openapi({ description: 'Pix key, in the format of its type', example: 'maria@example.com' }),
  pixKeyType: pixKeyTypeSchema,
};
const tevTarget = {
  kind: z.literal('TEV'),
  branch: z.string().regex(/^\d{1,4}$/, 'digits only, with or without leading zeros').openapi({ example: '0001' }),
  account: z.string().regex(/^\d{1,20}$/, 'digits only, with or without leading zeros').openapi({ example: '1000024' }),
};
const pin = { pin: pinSchema.optional().openapi({ description: '4 digits; not needed for client tokens of PIN-exempt tenants' }) };

const HolderSchedule = z
  .discriminatedUnion('kind', [
    z.object({ ...pixKeyTarget, ...when, ...pin }).openapi('NewScheduledPixKeyPayment'),
    z.object({ ...tevTarget, ...when, ...pin }).openapi('NewScheduledTevPayment'),
  ])
  .transform(toRequest)
  .openapi('NewScheduledPayment');
const IntegrationSchedule = z
  .discriminatedUnion('kind', [
    z.object({ ...pixKeyTarget, ...when }).openapi('NewIntegrationScheduledPixKeyPayment'),
    z.object({ ...tevTarget, ...when }).openapi('NewIntegrationScheduledTevPayment'),
  ])
  .transform(toRequest)
  .openapi('NewIntegrationScheduledPayment');

const OCCURRENCE_STATUSES = ['SCHEDULED', 'RUNNING', 'PAID', 'HELD_FOR_APPROVAL', 'FAILED', 'CANCELLED'] as const;

const OccurrenceApproval = z
  .object({
    status: z.enum(['PENDING', 'APPROVED', 'EXECUTED', 'FAILED', 'REJECTED', 'EXPIRED', 'CANCELLED']).openapi({
      description:
        "PENDING: waiting for the approver; APPROVED: approved, being paid; EXECUTED: approved and paid (tevId or payoutId); FAILED: approved, then refused (reason); " +
        "REJECTED by the approver; EXPIRED undecided at its deadline; CANCELLED (reason: the account's dual approval was turned off)",
    }),
    decision: z.enum(['APPROVED', 'REJECTED']).nullable().openapi({ description: "The approver's decision; null while undecided, and for an expired or cancelled request" }),
    decidedAt: utcDateTime('2026-12-05T11:20:31.000Z').nullable().openapi({ description: 'When it was decided, expired or was cancelled; null while PENDING' }),
    reason: z.string().nullable().openapi({ description: 'FAILED: why the approved payment was refused; CANCELLED: why the request was', example: null }),
    tevId: cuid('t2k7m4q9x1v8c3n6b0z5w7r4').nullable().openapi({ description: 'A held TEV, once approved: the transfer' }),
    payoutId: cuid('p6c1v8x3z0b5n2m9q4w7k1r6').nullable().openapi({ description: 'A held Pix, once approved and debited: the payout' }),
  })
  .openapi('ScheduledPaymentOccurrenceApproval');

const Occurrence = z
  .object({
    date: isoDate('São Paulo date'),
    dueAt: utcDateTime('2026-12-05T09:00:00.000Z'),
    status: z.enum(OCCURRENCE_STATUSES).openapi({
      description:
        'SCHEDULED: to run (at dueAt, or at nextAttemptAt for a retry); RUNNING: being paid; PAID: the TEV settled, or the Pix debited (its payout ' +
        "settles as any other); HELD_FOR_APPROVAL: held for the account's approver (approval says what became of it); FAILED: refused (reason); CANCELLED",
    }),
    attempts: z.number().int().openapi({ description: 'Attempts refused for insufficient balance so far', example: 0 }),
    nextAttemptAt: utcDateTime('2026-12-05T09:00:00.000Z').nullable().openapi({ description: 'SCHEDULED: when it runs (dueAt, or a retry); null otherwise' }),
    startedAt: utcDateTime('2026-12-05T09:00:00.412Z').nullable().openapi({ description: 'When its first attempt started' }),
    late: z.boolean().nullable().openapi({ description: 'It started later than its due time allows (the platform was away) and ran as soon as it could; null before it starts' }),
    finishedAt: utcDateTime('2026-12-05T09:00:00.731Z').nullable(),
    tevId: cuid('t2k7m4q9x1v8c3n6b0z5w7r4').nullable().openapi({ description: 'PAID by TEV: GET /v1/tev/{id}, or the statement' }),
    payoutId: cuid('p6c1v8x3z0b5n2m9q4w7k1r6').nullable().openapi({ description: 'PAID by Pix: the payout (GET /accounts/{accountId}/payouts/{payoutId})' }),
    approvalRequestId: uuid('2b7d9e1f-4a3c-4d8b-9e6f-0a1b2c3d4e5f').nullable().openapi({ description: 'HELD_FOR_APPROVAL: GET /approvals/{id} follows it' }),
    approval: OccurrenceApproval.nullable().openapi({ description: 'HELD_FOR_APPROVAL: what became of its approval request, as it stands now; null otherwise' }),
    reason: z.string().nullable().openapi({ description: 'FAILED: why (INSUFFICIENT_BALANCE after the retries, LIMIT_EXCEEDED, …); SCHEDULED after a refusal: the last one', example: null }),
  })
  .openapi('ScheduledPaymentOccurrence');

const summaryFields = {
  id: uuid('7b1e4c2a-9d3f-4a8e-b6c5-0f2d1e3a4b5c').openapi({ description: 'Its workflow is `scheduled-payment-<id>` (search attributes AccountId and ScheduleId)' }),
  status: z.enum(['ACTIVE', 'FINISHED', 'CANCELLED']).openapi({ description: 'ACTIVE while an occurrence is to run; FINISHED once none is; CANCELLED once cancelled whole' }),
  kind: z.enum(['PIX_KEY', 'TEV']),
  pixKey: z.string().nullable().openapi({ description: 'PIX_KEY: the key in canonical form', example: 'maria@example.com' }),
  pixKeyType: pixKeyTypeSchema.nullable(),
  beneficiaryName: z.string().nullable().openapi({ description: "PIX_KEY: the key's owner when it was scheduled (the key is looked up again when each occurrence is paid)", example: 'Maria Souza' }),
  branch: branch().nullable().openapi({ description: 'TEV: the branch, 4 digits' }),
  account: accountNumber('1000024').nullable().openapi({ description: 'TEV: the account number, without leading zeros' }),
  amountCents: cents('15000'),
  description: z.string().nullable().openapi({ example: 'Aluguel' }),
  date: isoDate('The date (the first, for a recurrence)'),
  time: z.string().regex(/^\d{2}:\d{2}:\d{2}$/).openapi({ description: 'São Paulo time of day', example: '06:00:00' }),
  recurrence: z
    .object({
      frequency: z.enum(['WEEKLY', 'MONTHLY']),
      dayOfMonth: z.number().int().nullable().openapi({ example: null }),
      count: z.number().int().nullable().openapi({ example: 12 }),
      until: isoDate('The last date').nullable().openapi({ example: null }),
    })
    .nullable(),
  nextRunAt: utcDateTime('2026-12-05T09:00:00.000Z').nullable().openapi({ description: 'When the next occurrence runs; null when none is left' }),
  createdAt: utcDateTime('2026-11-24T13:45:07.123Z'),
  cancelledAt: utcDateTime().nullable().openapi({ example: null }),
};

const ScheduledPaymentSummary = z.object(summaryFields).openapi('ScheduledPaymentSummary');
const ScheduledPayment = z
  .object({ ...summaryFields, occurrences: z.array(Occurrence).openapi({ description: 'Every occurrence by date: what came of the past ones, and when the next ones are due' }) })
  .openapi('ScheduledPayment');

function summaryView(s: Schedule): z.infer<typeof ScheduledPaymentSummary> {
  const t = s.target;
  return {
    id: s.id,
    status: s.status,
    kind: t.kind,
    pixKey: t.kind === 'PIX_KEY' ? t.pixKey : null,
    pixKeyType: t.kind === 'PIX_KEY' ? t.pixKeyType : null,
    beneficiaryName: t.kind === 'PIX_KEY' ? t.beneficiaryName : null,
    branch: t.kind === 'TEV' ? t.branch : null,
    account: t.kind === 'TEV' ? t.account : null,
    amountCents: s.amountCents,
    description: s.description,
    date: s.date,
    time: s.time,
    recurrence: s.recurrence,
    nextRunAt: s.nextRunAt,
    createdAt: s.createdAt,
    cancelledAt: s.cancelledAt,
  };
}

const view = ({ schedule, occurrences }: ScheduleDetail): z.infer<typeof ScheduledPayment> => ({
  ...summaryView(schedule),
  occurrences: occurrences.map((o) => ({
    date: o.date,
    dueAt: o.dueAt,
    status: o.status,
    attempts: o.attempts,
    nextAttemptAt: o.status === 'SCHEDULED' ? o.nextAttemptAt : null,
    startedAt: o.startedAt,
    late: o.late,
    finishedAt: o.finishedAt,
    tevId: o.tevId,
    payoutId: o.payoutId,
    approvalRequestId: o.approvalRequestId,
    approval: o.approval,
    reason: o.reason,
  })),
});

const occurrence = (date: string, status: (typeof OCCURRENCE_STATUSES)[number], more: Partial<z.infer<typeof Occurrence>> = {}) => ({
  date,
  dueAt: `${date}T09:00:00.000Z`,
  status,
  attempts: 0,
  nextAttemptAt: status === 'SCHEDULED' ? `${date}T09:00:00.000Z` : null,
  startedAt: null,
  late: null,
  finishedAt: null,
  tevId: null,
  payoutId: null,
  approvalRequestId: null,
  approval: null,
  reason: null,
  ...more,
});

const example = {
  id: '7b1e4c2a-9d3f-4a8e-b6c5-0f2d1e3a4b5c',
  status: 'ACTIVE' as const,
  kind: 'PIX_KEY' as const,
  pixKey: 'maria@example.com',
  pixKeyType: 'EMAIL' as const,
  beneficiaryName: 'Maria Souza',
  branch: null,
  account: null,
  amountCents: '15000',
  description: 'Aluguel',
  date: '2026-12-31',
  time: '06:00:00',
  recurrence: { frequency: 'MONTHLY' as const, dayOfMonth: null, count: 3, until: null },
  nextRunAt: '2027-01-31T09:00:00.000Z',
  createdAt: '2026-11-24T13:45:07.123Z',
  cancelledAt: null,
  occurrences: [
    occurrence('2026-12-31', 'PAID', {
      startedAt: '2026-12-31T09:00:00.412Z',
      late: false,
      finishedAt: '2026-12-31T09:00:00.731Z',
      payoutId: 'p6c1v8x3z0b5n2m9q4w7k1r6',
    }),
    occurrence('2027-01-31', 'SCHEDULED'),
    occurrence('2027-02-28', 'SCHEDULED'),
  ],
};
const { occurrences: _, ...summaryExample } = example;

const scheduleParams = accountIdParams.extend({ scheduleId: z.uuid({ error: 'scheduleId must be a UUID' }) });
const integrationScheduleParams = pixAccountParams.extend({ scheduleId: z.uuid({ error: 'scheduleId must be a UUID' }) });
const occurrenceDate = { date: z.iso.date({ error: 'date must be a calendar date, YYYY-MM-DD' }).openapi({ example: '2027-01-31' }) };

const TAGS = ['Scheduled payments'];
const CREATE_DESCRIPTION =
  'Pays a Pix key, or an account of the tenant (by branch and number, as the TEV beneficiary lookup gives them), on a São Paulo date at a time ' +
  `(06:00 by default), once or weekly or monthly, for \`count\` occurrences or \`until\` a date, at most ${HORIZON_YEARS} years ahead. ` +
  "Each occurrence is paid when due through the normal payment path: the account's limits then, dual approval asked then, the same events " +
  'and payout as any payment, under a key of its own (it never pays twice). Refused for insufficient balance, it is tried again (by default 3 times, ' +
  '3 hours apart, within its day), then FAILED; the schedule goes on. Events payment.scheduled.executed and payment.scheduled.failed (opt-in).';
const created = { description: 'Scheduled (or the schedule this Idempotency-Key made)', schema: ScheduledPayment, example };
const listed = {
  description: 'A page of schedules, newest first',
  schema: paginated('scheduledPayments', ScheduledPaymentSummary).openapi('ScheduledPaymentPage'),
  example: { scheduledPayments: [summaryExample], pagination: { limit: 20, nextCursor: null, hasMore: false } },
};
const read = { description: 'The schedule with every occurrence', schema: ScheduledPayment, example };
const cancelled = {
  description: 'Cancelled: every occurrence still to run is CANCELLED (one running at that moment finishes)',
  schema: ScheduledPayment,
  example: {
    ...example,
    status: 'CANCELLED' as const,
    nextRunAt: null,
    cancelledAt: '2027-01-02T10:00:00.000Z',
    occurrences: [example.occurrences[0]!, ...example.occurrences.slice(1).map((o) => ({ ...o, status: 'CANCELLED' as const, nextAttemptAt: null, finishedAt: '2027-01-02T10:00:00.000Z' }))],
  },
};
const occurrenceCancelled = {
  description: 'The occurrence is CANCELLED; the others stay as they were',
  schema: ScheduledPayment,
  example: { ...example, occurrences: [example.occurrences[0]!, { ...example.occurrences[1]!, status: 'CANCELLED' as const, nextAttemptAt: null, finishedAt: '2027-01-02T10:00:00.000Z' }, example.occurrences[2]!] },
};

export function registerHolderScheduleRoutes(router: Router, registry: OpenAPIRegistry, ctx: PaymentContext, auth: Authenticator<HolderAuth>): void {
  const path = '/accounts/:accountId/scheduled-payments';
  defineRoute(router, registry, {
    method: 'post',
    path,
    operationId: 'schedulePayment',
    tags: TAGS,
    summary: 'Schedule a payment (Pix by key, or TEV), once or recurring; the PIN is required',
    description: `${CREATE_DESCRIPTION} Idempotency-Key is optional; the same key returns the original schedule.`,
    headers: tenantHeaders.extend({ 'idempotency-key': idempotencyKey.optional() }),
    auth,
    params: accountIdParams,
    body: HolderSchedule,
    bodyExample: { kind: 'PIX_KEY', pixKey: 'maria@example.com', pixKeyType: 'EMAIL', amountCents: '15000', description: 'Aluguel', date: '2026-12-31', recurrence: { frequency: 'MONTHLY', count: 3 }, pin: '2580' },
    responses: { 201: created },
    raises: [operatingAccount, schedulePaymentAsHolder],
    async handler({ auth: a, params, headers, body }) {
      const account = await operatingAccount(a, params.accountId);
      const detail = await schedulePaymentAsHolder(ctx, a, body.body.pin, {
        account,
        origin: 'HOLDER_API',
        request: body.request,
        idempotencyKey: headers['idempotency-key'] ?? randomUUID(),
        now: new Date(),
      });
      return { status: 201, body: view(detail) };
    },
  });

  defineRoute(router, registry, {
    method: 'get',
    path,
    operationId: 'listScheduledPayments',
    tags: TAGS,
    summary: "The account's scheduled payments, newest first",
    headers: tenantHeaders,
    auth,
    params: accountIdParams,
    query: pageQuery,
    responses: { 200: listed },
    raises: [getOwnAccount],
    async handler({ auth: a, params, query }) {
      const account = await getOwnAccount(a.em, a.holder, params.accountId);
      const { schedules, pagination } = await listSchedules(a.em, ctx.config.KEY_PEPPER, account, query.limit, query.cursor);
      return { status: 200, body: { scheduledPayments: schedules.map(summaryView), pagination } };
    },
  });

  defineRoute(router, registry, {
    method: 'get',
    path: `${path}/:scheduleId`,
    operationId: 'getScheduledPayment',
    tags: TAGS,
    summary: 'A scheduled payment: each past occurrence with its outcome and payout, and the next ones',
    headers: tenantHeaders,
    auth,
    params: scheduleParams,
    responses: { 200: read },
    raises: [getOwnAccount, readSchedule],
    async handler({ auth: a, params }) {
      const account = await getOwnAccount(a.em, a.holder, params.accountId);
      return { status: 200, body: view(await readSchedule(a.em, account, params.scheduleId)) };
    },
  });

  defineRoute(router, registry, {
    method: 'delete',
    path: `${path}/:scheduleId`,
    operationId: 'cancelScheduledPayment',
    tags: TAGS,
    summary: 'Cancel a scheduled payment whole, at once (no PIN: it only keeps the money where it is)',
    headers: tenantHeaders,
    auth,
    params: scheduleParams,
    responses: { 200: cancelled },
    raises: [getOwnAccount, cancelSchedule],
    async handler({ auth: a, params }) {
      const account = await getOwnAccount(a.em, a.holder, params.accountId);
      return { status: 200, body: view(await cancelSchedule(ctx.config, a.em, account, params.scheduleId)) };
    },
  });

  defineRoute(router, registry, {
    method: 'delete',
    path: `${path}/:scheduleId/occurrences/:date`,
    operationId: 'cancelScheduledPaymentOccurrence',
    tags: TAGS,
    summary: 'Cancel one occurrence still to run (no PIN); the schedule goes on',
    headers: tenantHeaders,
    auth,
    params: scheduleParams.extend(occurrenceDate),
    responses: { 200: occurrenceCancelled },
    raises: [getOwnAccount, cancelOccurrence],
    async handler({ auth: a, params }) {
      const account = await getOwnAccount(a.em, a.holder, params.accountId);
      return { status: 200, body: view(await cancelOccurrence(ctx.config, a.em, account, params.scheduleId, params.date)) };
    },
  });
}

/** The same for an integrator, on the Pix accounts of its key (`accountId` is the `pixAccountId`); no PIN: the key is the credential. */
export function registerIntegrationScheduleRoutes(router: Router, registry: OpenAPIRegistry, ctx: PaymentContext, auth: Authenticator<IntegrationAuth>): void {
  const path = '/v1/pix-accounts/:accountId/scheduled-payments';
  defineRoute(router, registry, {
    method: 'post',
    path,
    operationId: 'createScheduledPayment',
    tags: TAGS,
    summary: 'Schedule a payment (Pix by key, or TEV) of the Pix account, once or recurring',
    description: `${CREATE_DESCRIPTION} A retry with the same Idempotency-Key and body returns the original schedule.`,
    headers: z.object({ 'idempotency-key': idempotencyKey }),
    auth,
    params: pixAccountParams,
    body: IntegrationSchedule,
    bodyExample: { kind: 'TEV', branch: '0001', account: '1000024', amountCents: '250000', description: 'Salário', date: '2026-12-05', time: '08:00', recurrence: { frequency: 'MONTHLY', dayOfMonth: 5, until: '2027-12-05' } },
    responses: { 201: created },
    raises: [operatingPixAccount, schedulePayment],
    async handler({ auth: a, params, headers, body }) {
      const { account } = await operatingPixAccount(a, params.accountId);
      const detail = await schedulePayment(ctx, a.em, { account, origin: 'INTEGRATION_API', request: body.request, idempotencyKey: headers['idempotency-key'], now: new Date() });
      return { status: 201, body: view(detail) };
    },
  });

  defineRoute(router, registry, {
    method: 'get',
    path,
    operationId: 'listIntegrationScheduledPayments',
    tags: TAGS,
    summary: "The Pix account's scheduled payments, newest first",
    auth,
    params: pixAccountParams,
    query: pageQuery,
    responses: { 200: listed },
    raises: [scopedAccount],
    async handler({ auth: a, params, query }) {
      const account = await scopedAccount(a, params.accountId);
      const { schedules, pagination } = await listSchedules(a.em, ctx.config.KEY_PEPPER, account, query.limit, query.cursor);
      return { status: 200, body: { scheduledPayments: schedules.map(summaryView), pagination } };
    },
  });

  defineRoute(router, registry, {
    method: 'get',
    path: `${path}/:scheduleId`,
    operationId: 'getIntegrationScheduledPayment',
    tags: TAGS,
    summary: 'A scheduled payment: each past occurrence with its outcome and payout, and the next ones',
    auth,
    params: integrationScheduleParams,
    responses: { 200: read },
    raises: [scopedAccount, readSchedule],
    async handler({ auth: a, params }) {
      const account = await scopedAccount(a, params.accountId);
      return { status: 200, body: view(await readSchedule(a.em, account, params.scheduleId)) };
    },
  });

  defineRoute(router, registry, {
    method: 'delete',
    path: `${path}/:scheduleId`,
    operationId: 'cancelIntegrationScheduledPayment',
    tags: TAGS,
    summary: 'Cancel a scheduled payment whole, at once',
    auth,
    params: integrationScheduleParams,
    responses: { 200: cancelled },
    raises: [scopedAccount, cancelSchedule],
    async handler({ auth: a, params }) {
      const account = await scopedAccount(a, params.accountId);
      return { status: 200, body: view(await cancelSchedule(ctx.config, a.em, account, params.scheduleId)) };
    },
  });

  defineRoute(router, registry, {
    method: 'delete',
    path: `${path}/:scheduleId/occurrences/:date`,
    operationId: 'cancelIntegrationScheduledPaymentOccurrence',
    tags: TAGS,
    summary: 'Cancel one occurrence still to run; the schedule goes on',
    auth,
    params: integrationScheduleParams.extend(occurrenceDate),
    responses: { 200: occurrenceCancelled },
    raises: [scopedAccount, cancelOccurrence],
    async handler({ auth: a, params }) {
      const account = await scopedAccount(a, params.accountId);
      return { status: 200, body: view(await cancelOccurrence(ctx.config, a.em, account, params.scheduleId, params.date)) };
    },
  });
}
