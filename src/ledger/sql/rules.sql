-- The rules every posting and the API's checks share, each in one place. Small `language sql` functions: PostgreSQL
-- inlines the scalar ones and the table ones read in FROM into the statement that calls them, so a posting pays for
-- the rule, not for a call.

-- Why money may not move out of (or into) a holder's account now, or null when it may: the holder blocked or closed,
-- then KYC not finished, then the account not APPROVED, in the order the API answers them. An account without a
-- holder (the tenant's own) never "may move" as a holder's does.
create or replace function account_refusal(p_account_status text, p_holder_status text, p_onboarding_step text) returns text
language sql immutable parallel safe as $$
  select case
    when p_holder_status in ('BLOCKED', 'CLOSED') then 'HOLDER_BLOCKED'
    when p_holder_status is distinct from 'ACTIVE' or p_onboarding_step is distinct from 'DONE' then 'ONBOARDING_INCOMPLETE'
    when p_account_status is distinct from 'APPROVED' then 'ACCOUNT_NOT_APPROVED'
  end
$$;

create or replace function account_may_move_money(account_status text, holder_status text, onboarding_step text) returns boolean
language sql immutable parallel safe as $$
  select account_refusal(account_status, holder_status, onboarding_step) is null
$$;

-- A holder account of the tenant named by branch and account number, as a client may write them: the branch with or
-- without its leading zeros (four digits), the number without them. Null when there is none.
create or replace function holder_account_by_number(p_tenant_id uuid, p_branch text, p_account text) returns uuid
language sql stable as $$
  select a.id from account a
   where a.tenant_id = p_tenant_id and a.kind = 'HOLDER'
     and a.agency = lpad(coalesce(nullif(ltrim(p_branch, '0'), ''), '0'), 4, '0') and a.number = ltrim(p_account, '0')
$$;

-- The fees in force for an account of a tenant: the account's own value, else the tenant's, else 0 (decisions.md).
-- Always one row; it reads only `fee_schedule` (one unique index, by tenant and account), not the account.
drop function if exists fee_schedule_of(uuid);
create or replace function fee_schedule_of(p_account_id uuid, p_tenant_id uuid)
returns table (tev_out bigint, tev_in bigint, pix_out bigint, pix_in bigint, qr_out bigint)
language sql stable as $$
  select coalesce(own.tev_out_cents, ten.tev_out_cents, 0), coalesce(own.tev_in_cents, ten.tev_in_cents, 0),
         coalesce(own.pix_out_cents, ten.pix_out_cents, 0), coalesce(own.pix_in_cents, ten.pix_in_cents, 0),
         coalesce(own.qr_out_cents, ten.qr_out_cents, 0)
    from (select) one
    left join fee_schedule own on own.tenant_id = p_tenant_id and own.account_id = p_account_id
    left join fee_schedule ten on ten.tenant_id = p_tenant_id and ten.account_id is null
$$;

-- Records workflows that must run (or be woken), in the caller's transaction: `workflow_start`, which the hand-off
-- reconciler starts from. `p_starts`: a JSON array of {taskQueue, workflowType, workflowId, args, searchAttributes,
-- reusePolicy, signal?: {name, args}}. The key is the workflow id, and for a wake the workflow id and the signal's
-- name. Recording one again (a retried request, a second wake) bumps its version, so a start or signal already under
-- way does not cancel the newer request. Due at once (`p_due_now`), or after a head start of 2 seconds for a writer
-- that starts it itself. Answers each start's key and version, in the order given.
create or replace function record_workflow_starts(p_starts jsonb, p_due_now boolean)
returns table (key text, version integer)
language sql volatile as $$
  with s as (
    select s.ord, s.start->>'workflowId' || coalesce('#' || (s.start->'signal'->>'name'), '') as key, s.start
      from jsonb_array_elements(p_starts) with ordinality s(start, ord)
  ), recorded as (
    insert into workflow_start as w (key, task_queue, workflow_type, workflow_id, args, search_attributes, reuse_policy, signal,
                                     signal_args, next_attempt_at)
    select s.key, s.start->>'taskQueue', s.start->>'workflowType', s.start->>'workflowId', s.start->'args',
           s.start->'searchAttributes', s.start->>'reusePolicy', s.start->'signal'->>'name', s.start->'signal'->'args',
           now() + case when p_due_now then interval '0' else interval '2 seconds' end
      from s
    on conflict (key) do update
      set version = w.version + 1, args = excluded.args, signal_args = excluded.signal_args, next_attempt_at = excluded.next_attempt_at
    returning w.key, w.version
  )
  select s.key, r.version from s join recorded r on r.key = s.key order by s.ord
$$;

-- This platform's own ISPB, as a TEV's metadata names it on both sides. The same digits as PLATFORM_ISPB
-- (src/shared/institution.ts), which TypeScript uses; test/domain/rules.test.ts checks that they agree.
create or replace function platform_ispb() returns text
language sql immutable parallel safe as $$
  select '00000000'
$$;

-- What a TEV's statement says when the sender gave no description.
create or replace function tev_description(p_description text, p_beneficiary_name text) returns text
language sql immutable parallel safe as $$
  select coalesce(p_description, 'Transferência para ' || p_beneficiary_name)
$$;

-- The beneficiary of a TEV as the sender's statement and payout show it: an internal current account of this bank.
-- Stable, as jsonb_build_object is, so that it is inlined where it is called.
create or replace function tev_beneficiary(p_name text, p_branch text, p_account text, p_document text) returns jsonb
language sql stable parallel safe as $$
  select jsonb_build_object('ispb', platform_ispb(), 'name', p_name, 'branch', p_branch, 'account', p_account, 'document', p_document,
                            'accountType', 'CACC', 'branchDigit', null, 'accountModel', 'INTERNAL')
$$;

-- Whether the receiver of a payment from an account is one of its trusted contacts at `p_at`: a contact not removed,
-- trusted since `p_at` or before (its delayed-effect workflow sets `trusted_from` once the 24 h wait has passed),
-- matching the Pix key (keys are stored in canonical form, lowercase) or the branch and account, written as
-- holder_account_by_number reads them. Payments to a trusted contact are exempt from the night limit only.
-- As a table of one row, so that a query reading it in FROM has it inlined (a batch's debits read it for all their
-- receivers in one statement); is_trusted_contact answers the same as a value.
create or replace function trusted_contact_match(p_account_id uuid, p_pix_key text, p_branch text, p_account text, p_at timestamptz)
returns table (trusted boolean)
language sql stable as $$
  select exists (
    select from trusted_contact c
     where c.account_id = p_account_id and c.removed_at is null and c.trusted_from <= p_at
       and ((c.kind = 'PIX_KEY' and c.pix_key = lower(p_pix_key))
         or (c.kind = 'ACCOUNT' and c.branch = lpad(coalesce(nullif(ltrim(p_branch, '0'), ''), '0'), 4, '0')
             and c.account_number = ltrim(p_account, '0'))))
$$;

create or replace function is_trusted_contact(p_account_id uuid, p_pix_key text, p_branch text, p_account text, p_at timestamptz)
returns boolean
language sql stable as $$
  select t.trusted from trusted_contact_match(p_account_id, p_pix_key, p_branch, p_account, p_at) t
$$;

-- Transaction limits (issue 25). An account's debits are limited per channel (PIX, TEV): per transaction, per day
-- period (06:00 to the night start), per night period (the night start to 06:00) and per calendar month, in
-- America/Sao_Paulo. The values in force are the account's own (account_limit), else its tenant's defaults for its
-- holder type and channel (limit_policy), never above the tenant's maximum; with neither, there is no limit.

-- The time the limits' periods are read at: now, or the time a test sets for its transaction
-- (`set_config('banking.limits_clock', '2026-11-24T19:59:59-03:00', true)`), so the boundaries are tested without
-- waiting for them.
create or replace function limits_clock() returns timestamptz
language sql volatile as $$
  select coalesce(nullif(current_setting('banking.limits_clock', true), '')::timestamptz, clock_timestamp())
$$;

-- The periods a moment falls in for an account whose night starts at p_night_start_hour (20 or 22): DAY from 06:00 to
-- the night start, NIGHT from the night start to 06:00 the next day, each keyed by the São Paulo date it began; and the
-- calendar month, by its first day.
create or replace function limit_periods(p_at timestamptz, p_night_start_hour smallint)
returns table (period text, period_of date, month_of date)
language sql stable parallel safe as $$
  select case when t.local::time >= time '06:00' and t.local::time < make_time(p_night_start_hour, 0, 0) then 'DAY' else 'NIGHT' end,
         case when t.local::time < time '06:00' then t.local::date - 1 else t.local::date end,
         date_trunc('month', t.local)::date
    from (select p_at at time zone 'America/Sao_Paulo' as local) t
$$;

-- An account's limits on a channel at a moment: the values in force (null: no limit), the tenant's maximums (null: no
-- policy), the night start, the periods the moment falls in, and what the account has sent in them (0 once a period is
-- over). Always one row; each table read by its primary key.
create or replace function limit_state(p_tenant_id uuid, p_account_id uuid, p_holder_type text, p_channel text, p_at timestamptz)
returns table (per_transaction_cents bigint, day_cents bigint, night_cents bigint, month_cents bigint,
               max_per_transaction_cents bigint, max_day_cents bigint, max_night_cents bigint, max_month_cents bigint,
               night_start_hour smallint, period text, period_of date, month_of date, period_used_cents bigint, month_used_cents bigint)
language sql stable as $$
  -- least() skips nulls: the account's own value, else the tenant's default, never above the tenant's maximum.
  select least(coalesce(o.per_transaction, p.per_transaction_cents), p.max_per_transaction_cents),
         least(coalesce(o.day, p.day_cents), p.max_day_cents),
         least(coalesce(o.night, p.night_cents), p.max_night_cents),
         least(coalesce(o.month, p.month_cents), p.max_month_cents),
         p.max_per_transaction_cents, p.max_day_cents, p.max_night_cents, p.max_month_cents,
         w.night_start_hour, w.period, w.period_of, w.month_of,
         case when w.period = 'DAY' and u.day_of = w.period_of then u.day_used_cents
              when w.period = 'NIGHT' and u.night_of = w.period_of then u.night_used_cents
              else 0 end,
         case when u.month_of = w.month_of then u.month_used_cents else 0 end
    from (select) one
    left join limit_policy p on p.tenant_id = p_tenant_id and p.holder_type = p_holder_type and p.channel = p_channel
    left join account_limit a on a.account_id = p_account_id
    cross join lateral (
      select case p_channel when 'PIX' then a.pix_per_transaction_cents else a.tev_per_transaction_cents end as per_transaction,
             case p_channel when 'PIX' then a.pix_day_cents else a.tev_day_cents end as day,
             case p_channel when 'PIX' then a.pix_night_cents else a.tev_night_cents end as night,
             case p_channel when 'PIX' then a.pix_month_cents else a.tev_month_cents end as month) o
    cross join lateral (select coalesce(a.night_start_hour, 20::smallint) as night_start_hour, lp.*
                          from limit_periods(p_at, coalesce(a.night_start_hour, 20::smallint)) lp) w
    left join account_limit_usage u on u.account_id = p_account_id and u.channel = p_channel
$$;

-- Which limit a debit of p_amount breaks, given its account's limit_state, or null when it breaks none: the one per
-- transaction, then the current day or night period's (not at night for a payment exempt from the night limit: to a
-- trusted contact, is_trusted_contact), then the month's. As the refusal's details say it: the channel, the period (TRANSACTION, DAY,
-- NIGHT, MONTH), the limit and what remained of it, in cents as text. Stable, as jsonb_build_object is, so that it is
-- inlined into the expression that calls it: declared immutable, it ran as a call of its own (about 6 µs a debit).
create or replace function limit_refusal(
  p_channel text, p_amount bigint, p_night_exempt boolean, p_per_transaction_cents bigint, p_period text, p_period_cents bigint,
  p_period_used_cents bigint, p_month_cents bigint, p_month_used_cents bigint
) returns jsonb
language sql stable parallel safe as $$
  select case
    when p_amount > p_per_transaction_cents then
      jsonb_build_object('channel', p_channel, 'period', 'TRANSACTION', 'limitCents', p_per_transaction_cents::text,
                         'remainingCents', p_per_transaction_cents::text)
    when not (p_period = 'NIGHT' and p_night_exempt) and p_period_used_cents + p_amount > p_period_cents then
      jsonb_build_object('channel', p_channel, 'period', p_period, 'limitCents', p_period_cents::text,
                         'remainingCents', greatest(p_period_cents - p_period_used_cents, 0)::text)
    when p_month_used_cents + p_amount > p_month_cents then
      jsonb_build_object('channel', p_channel, 'period', 'MONTH', 'limitCents', p_month_cents::text,
                         'remainingCents', greatest(p_month_cents - p_month_used_cents, 0)::text)
  end
$$;
