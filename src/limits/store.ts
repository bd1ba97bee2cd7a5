/**
 * The transaction limits' tables (migration 20261124001000): `limit_policy`, `account_limit`, `limit_change_request`,
 * and `account_limit_usage` as `limit_state` reads it (src/ledger/sql/rules.sql). The posting functions count and give
 * back usage themselves; nothing here writes it.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import type { HolderType } from '../shared/documents.ts';
import type { LimitChannel } from '../shared/errors.ts';
import { isoUtc } from '../shared/pagination.ts';

export const LIMIT_CHANNELS = ['PIX', 'TEV'] as const satisfies readonly LimitChannel[];
export const LIMIT_FIELDS = ['perTransaction', 'day', 'night', 'month'] as const;
export type LimitField = (typeof LIMIT_FIELDS)[number];

/** One value per limit of a channel. */
export type LimitValues<T = bigint> = Record<LimitField, T>;

/** When the night period starts: 20:00 (the default) or 22:00. */
export type NightStartHour = 20 | 22;

/** A tenant's limits for one holder type and channel: the defaults, and the most a holder may raise each to. */
export interface LimitPolicy {
  defaults: LimitValues;
  maximums: LimitValues;
}

/** An account's own choices: its night start, and per channel each value it set (null: the tenant's default). */
export interface AccountLimitSettings {
  nightStartHour: NightStartHour;
  values: Record<LimitChannel, LimitValues<bigint | null>>;
}

/** An account's limits on a channel now (`limit_state`): null where there is no limit, or no policy (maximums). */
export interface LimitState {
  inForce: LimitValues<bigint | null>;
  maximums: LimitValues<bigint | null>;
  nightStartHour: NightStartHour;
  period: 'DAY' | 'NIGHT';
  periodUsedCents: bigint;
  monthUsedCents: bigint;
}

export type ChangeRequestStatus = 'PENDING' | 'APPLIED' | 'CANCELLED' | 'REPLACED';

/** A holder's request to raise limits (or start the night later): only what it raises, in force at `effectiveAt`. */
export interface LimitChangeRequest {
  id: string;
  tenantId: string;
  accountId: string;
  nightStartHour: NightStartHour | null;
  values: Record<LimitChannel, Partial<LimitValues>>;
  status: ChangeRequestStatus;
  requestedAt: string;
  effectiveAt: string;
}

const COLUMN: Record<LimitField, string> = { perTransaction: 'per_transaction_cents', day: 'day_cents', night: 'night_cents', month: 'month_cents' };

/** `account_limit` and `limit_change_request` name a channel's value `pix_day_cents`, `tev_month_cents`, … */
const channelColumn = (channel: LimitChannel, field: LimitField) => `${channel.toLowerCase()}_${COLUMN[field]}`;
const CHANNEL_COLUMNS = LIMIT_CHANNELS.flatMap((channel) => LIMIT_FIELDS.map((field) => ({ channel, field, column: channelColumn(channel, field) })));

const bigintOrNull = (v: string | null): bigint | null => (v === null ? null : BigInt(v));
const valuesOf = <T>(read: (field: LimitField) => T): LimitValues<T> => Object.fromEntries(LIMIT_FIELDS.map((f) => [f, read(f)])) as LimitValues<T>;

export async function findPolicy(em: EntityManager, tenantId: string, holderType: HolderType, channel: LimitChannel): Promise<LimitPolicy | null> {
  const [row] = await em.execute<Record<string, string>[]>(
    `select ${LIMIT_FIELDS.map((f) => `${COLUMN[f]}::text as "${f}", max_${COLUMN[f]}::text as "max_${f}"`).join(', ')}
       from limit_policy where tenant_id = ? and holder_type = ? and channel = ?`,
    [tenantId, holderType, channel],
  );
  return row ? { defaults: valuesOf((f) => BigInt(row[f]!)), maximums: valuesOf((f) => BigInt(row[`max_${f}`]!)) } : null;
}

export async function upsertPolicy(em: EntityManager, tenantId: string, holderType: HolderType, channel: LimitChannel, policy: LimitPolicy): Promise<void> {
  const columns = LIMIT_FIELDS.flatMap((f) => [COLUMN[f], `max_${COLUMN[f]}`]);
  await em.execute(
    `insert into limit_policy (tenant_id, holder_type, channel, ${columns.join(', ')}) values (?, ?, ?, ${columns.map(() => '?').join(', ')})
     on conflict (tenant_id, holder_type, channel) do update set ${columns.map((c) => `${c} = excluded.${c}`).join(', ')}, updated_at = now()`,
    [tenantId, holderType, channel, ...LIMIT_FIELDS.flatMap((f) => [policy.defaults[f].toString(), policy.maximums[f].toString()])],
  );
}

/** Each channel's limit_state now, in one query. */
export async function limitStates(em: EntityManager, tenantId: string, accountId: string, holderType: HolderType): Promise<Record<LimitChannel, LimitState>> {
  const rows = await em.execute<Record<string, string | null>[]>(
    `select c.channel, ${LIMIT_FIELDS.map((f) => `s.${COLUMN[f]}::text as "${f}", s.max_${COLUMN[f]}::text as "max_${f}"`).join(', ')},
            s.night_start_hour, s.period, s.period_used_cents::text as period_used, s.month_used_cents::text as month_used
       from unnest(?::text[]) c(channel)
      cross join lateral limit_state(?, ?, ?, c.channel, now()) s`,
    [`{${LIMIT_CHANNELS.join(',')}}`, tenantId, accountId, holderType],
  );
  const states = rows.map((r) => [
    r.channel as LimitChannel,
    {
      inForce: valuesOf((f) => bigintOrNull(r[f]!)),
      maximums: valuesOf((f) => bigintOrNull(r[`max_${f}`]!)),
      nightStartHour: Number(r.night_start_hour) as NightStartHour,
      period: r.period as LimitState['period'],
      periodUsedCents: BigInt(r.period_used!),
      monthUsedCents: BigInt(r.month_used!),
    },
  ]);
  return Object.fromEntries(states) as Record<LimitChannel, LimitState>;
}

/**
 * The account's own settings, locked for the rest of the transaction: its row is made first if it has none, so two
 * changes of one account run one after the other.
 */
export async function lockAccountSettings(em: EntityManager, tenantId: string, accountId: string): Promise<AccountLimitSettings> {
  await em.execute('insert into account_limit (account_id, tenant_id) values (?, ?) on conflict (account_id) do nothing', [accountId, tenantId]);
  const [row] = await em.execute<Record<string, string | null>[]>(
    `select night_start_hour, ${CHANNEL_COLUMNS.map((c) => `${c.column}::text as ${c.column}`).join(', ')} from account_limit where account_id = ? for update`,
    [accountId],
  );
  return {
    nightStartHour: Number(row!.night_start_hour) as NightStartHour,
    values: Object.fromEntries(LIMIT_CHANNELS.map((channel) => [channel, valuesOf((f) => bigintOrNull(row![channelColumn(channel, f)]!))])) as AccountLimitSettings['values'],
  };
}

export async function saveAccountSettings(em: EntityManager, accountId: string, settings: AccountLimitSettings): Promise<void> {
  await em.execute(
    `update account_limit set night_start_hour = ?, ${CHANNEL_COLUMNS.map((c) => `${c.column} = ?`).join(', ')}, updated_at = now() where account_id = ?`,
    [settings.nightStartHour, ...CHANNEL_COLUMNS.map((c) => settings.values[c.channel][c.field]?.toString() ?? null), accountId],
  );
}

const REQUEST_COLUMNS = `id, tenant_id, account_id, night_start_hour, ${CHANNEL_COLUMNS.map((c) => `${c.column}::text as ${c.column}`).join(', ')}, status,
  ${isoUtc('requested_at')} as requested_at, ${isoUtc('effective_at')} as effective_at`;

function toChangeRequest(r: Record<string, string | null>): LimitChangeRequest {
  const values = Object.fromEntries(
    LIMIT_CHANNELS.map((channel) => [
      channel,
      Object.fromEntries(LIMIT_FIELDS.flatMap((f) => (r[channelColumn(channel, f)] === null ? [] : [[f, BigInt(r[channelColumn(channel, f)]!)]]))),
    ]),
  ) as LimitChangeRequest['values'];
  return {
    id: r.id!,
    tenantId: r.tenant_id!,
    accountId: r.account_id!,
    nightStartHour: r.night_start_hour === null ? null : (Number(r.night_start_hour) as NightStartHour),
    values,
    status: r.status as ChangeRequestStatus,
    requestedAt: r.requested_at!,
    effectiveAt: r.effective_at!,
  };
}

export async function insertChangeRequest(em: EntityManager, request: Omit<LimitChangeRequest, 'status' | 'requestedAt'>): Promise<LimitChangeRequest> {
  const [row] = await em.execute<Record<string, string | null>[]>(
    `insert into limit_change_request (id, tenant_id, account_id, night_start_hour, ${CHANNEL_COLUMNS.map((c) => c.column).join(', ')}, status, effective_at)
     values (?, ?, ?, ?, ${CHANNEL_COLUMNS.map(() => '?').join(', ')}, 'PENDING', ?)
     returning ${REQUEST_COLUMNS}`,
    [
      request.id,
      request.tenantId,
      request.accountId,
      request.nightStartHour,
      ...CHANNEL_COLUMNS.map((c) => request.values[c.channel][c.field]?.toString() ?? null),
      request.effectiveAt,
    ],
  );
  return toChangeRequest(row!);
}

/** The account's pending request, if any (at most one: a unique index). */
export async function findPendingRequest(em: EntityManager, accountId: string): Promise<LimitChangeRequest | null> {
  const [row] = await em.execute<Record<string, string | null>[]>(`select ${REQUEST_COLUMNS} from limit_change_request where account_id = ? and status = 'PENDING'`, [accountId]);
  return row ? toChangeRequest(row) : null;
}

/** A request, locked for the rest of the transaction. */
export async function lockChangeRequest(em: EntityManager, requestId: string): Promise<LimitChangeRequest | null> {
  const [row] = await em.execute<Record<string, string | null>[]>(`select ${REQUEST_COLUMNS} from limit_change_request where id = ? for update`, [requestId]);
  return row ? toChangeRequest(row) : null;
}

/** A pending request takes its final state. */
export async function closeChangeRequest(em: EntityManager, requestId: string, status: Exclude<ChangeRequestStatus, 'PENDING'>): Promise<void> {
  await em.execute(`update limit_change_request set status = ?, resolved_at = now() where id = ? and status = 'PENDING'`, [status, requestId]);
}

/** A replaced request names the one that replaced it (recorded after it, since only one may be pending). */
export async function markReplacedBy(em: EntityManager, requestId: string, replacedBy: string): Promise<void> {
  await em.execute('update limit_change_request set replaced_by = ? where id = ?', [replacedBy, requestId]);
}
