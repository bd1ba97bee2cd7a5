-- The posting engine's shared steps. A posting function locks its accounts with `lock_accounts`, applies its rules to
-- what they hold (src/ledger/sql/rules.sql), takes the time (clock_timestamp(), after the locks) and writes its lines
-- with `post_movements`, the one writer of movements, ledger entries and balances.

-- A statement's `date`: ISO 8601 in UTC with milliseconds, as JavaScript's toISOString() writes it.
-- Stable, not immutable, as to_char is: PostgreSQL then inlines it (and the two below) into the statement or
-- PL/pgSQL expression that calls it, instead of running a query of its own at each call.
create or replace function iso_utc(p_at timestamptz) returns text
language sql stable parallel safe as $$
  select to_char(p_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
$$;

-- An offset from UTC as ISO 8601 writes it: `-03:00`, `+00:00`, `+05:30`.
create or replace function utc_offset_text(p_offset interval) returns text
language sql stable parallel safe as $$
  select case when p_offset < interval '0' then '-' else '+' end || to_char(greatest(p_offset, -p_offset), 'HH24:MI')
$$;

-- A statement's `paymentDate`: `YYYY-MM-DD HH:mm:ss-03:00`, the wall clock and offset of America/Sao_Paulo.
create or replace function sao_paulo_payment_date(p_at timestamptz) returns text
language sql stable parallel safe as $$
  select to_char(p_at at time zone 'America/Sao_Paulo', 'YYYY-MM-DD HH24:MI:SS')
         || utc_offset_text((p_at at time zone 'America/Sao_Paulo') - (p_at at time zone 'UTC'))
$$;

-- Replaced by fee_schedule_of (rules.sql).
drop function if exists pix_fees(uuid, uuid);

-- Locks a posting's accounts of one tenant for the rest of the transaction, in the one order every posting follows:
-- the holders by id, then the tenant's own accounts (`p_own_kinds`: SETTLEMENT, FEE_REVENUE) by id. Two postings on
-- the same accounts, in any direction, queue instead of deadlocking; the tenant's own accounts, which take every Pix
-- of the tenant, are held for the shortest time. `for no key update`: a posting changes balances, never keys, so it
-- does not conflict with the key share locks of foreign-key checks. Volatile, so it is never inlined: every row is
-- locked, whatever the caller reads of them.
-- Its answer names the holder's side too, for the rules the caller applies: `refusal` and `may_move` are
-- account_refusal's answer (rules.sql), and `holder_type` chooses the tenant's limits (limit_state). Planned once per
-- connection (a generic plan): PostgreSQL otherwise planned it again at every call, which made the call about four
-- times as long (0.26 ms against 0.06 ms in a TEV).
drop function if exists lock_accounts(uuid, uuid[], text[]);
create function lock_accounts(p_tenant_id uuid, p_holder_ids uuid[], p_own_kinds text[])
returns table (id uuid, kind text, status text, balance_cents bigint, agency text, number text, pix_account_id text,
               core_account_id text, approver_holder_id uuid, holder_status text, onboarding_step text, holder_name text,
               holder_document text, refusal text, may_move boolean, holder_type text)
language sql volatile set plan_cache_mode = force_generic_plan as $$
  select a.id, a.kind, a.status, a.balance_cents, a.agency, a.number, a.pix_account_id, a.core_account_id, a.approver_holder_id,
         h.status, h.onboarding_step, h.name, h.document, account_refusal(a.status, h.status, h.onboarding_step),
         account_may_move_money(a.status, h.status, h.onboarding_step), h.type
    from account a
    -- The holder by its key, one row for each account locked: as a plain join, PostgreSQL hashed the whole holder table
    -- when it was small (a sequential scan of every holder at every posting: 8% of a TEV's instructions).
    left join lateral (select * from holder h where h.id = a.holder_id limit 1) h on true
   -- The rows themselves, with no subquery: a row that changed while this waited for its lock is checked again as it
   -- now is. One arm per kind, each read through its own index (the tenant's own accounts through their unique ones).
   where a.tenant_id = p_tenant_id
     and ((a.kind = 'HOLDER' and a.id = any(p_holder_ids))
          or (a.kind = 'SETTLEMENT' and 'SETTLEMENT' = any(p_own_kinds))
          or (a.kind = 'FEE_REVENUE' and 'FEE_REVENUE' = any(p_own_kinds)))
   order by a.kind <> 'HOLDER', a.id
     for no key update of a
$$;

-- Locks accounts of any tenants for the rest of the transaction, in the order of lock_accounts: the holders' accounts
-- by id, then the tenants' own accounts by id. For a batch, whose requests span many accounts and tenants: it locks
-- them all first, so that it never waits for a row while it holds one that comes later in that order. Answers how
-- many it locked.
create or replace function lock_account_rows(p_account_ids uuid[]) returns integer
language sql volatile as $$
  select count(*)::integer
    from (select a.id from account a where a.id = any(p_account_ids) order by a.kind <> 'HOLDER', a.id for no key update of a) locked
$$;

-- A line and a movement of a posting, as post_movements takes them: named arguments, and the defaults most movements
-- share. Plain row constructors, inlined into the statement that calls them.
create or replace function posting_line_of(p_id text, p_kind text, p_amount bigint) returns posting_line
language sql immutable parallel safe as $$
  select row(p_id, p_kind, p_amount)::posting_line
$$;

create or replace function posting_movement_of(
  id text, account_id uuid, operation_id text, source text, channel text, direction text, amount bigint, description text,
  lines posting_line[], fee bigint default 0, metadata jsonb default '{}', status text default 'DONE',
  payout_status text default null, status_external text default 'SUCCESS', external_ref text default null,
  end_to_end_id text default null, reverses_movement_id text default null, at timestamptz default null
) returns posting_movement
language sql immutable parallel safe as $$
  select row(id, account_id, operation_id, source, channel, direction, status, payout_status, status_external, amount, fee,
             description, external_ref, end_to_end_id, reverses_movement_id, metadata, at, lines)::posting_movement
$$;

-- Movements written as JSON, its keys the fields of posting_movement and posting_line: for a posting that builds its
-- movements in a query.
create or replace function posting_movements_of_json(p_movements jsonb) returns posting_movement[]
language sql stable parallel safe as $$
  select array(select jsonb_populate_recordset(null::posting_movement, p_movements))
$$;

-- Replaced by post_movements of posting_movement[]: its JSON was built and read again at every posting.
drop function if exists post_movements(uuid, timestamptz, jsonb);
-- Its first typed version answered a table: a return type changes only by dropping the function.
drop function if exists post_movements(uuid, timestamptz, posting_movement[]);
drop function if exists posting_checked(uuid, bigint, text, uuid);

-- Writes the movements of one posting of one tenant, on accounts the caller locked (`lock_accounts`), at `p_at`: each
-- movement's row, its lines as ledger entries with the balance after each, and the new balances. Answers each
-- movement's balance after its last line, in the order given; null for a movement not written.
--
-- Lines carry signed amounts and are applied in order; a movement's `at`, when given, is its time instead of `p_at` (a
-- batch's movements on one account, apart in batch order). A line of 0 cents writes no entry, and a movement left with
-- no line is not written (a fee of 0 takes nothing from anyone).
--
-- Refused with an exception, so that nothing of the posting stays: lines that do not sum to zero (double entry), a
-- line on an account that is not the tenant's, and a balance below zero after any line but the settlement account's
-- (money at the Pix provider). Three statements whatever the posting's size, their plans kept for the connection.
create or replace function post_movements(p_tenant_id uuid, p_at timestamptz, p_movements posting_movement[])
returns bigint[]
language plpgsql set plan_cache_mode = force_generic_plan as $$
declare
  v_movement posting_movement;
  v_line posting_line;
  v_sum bigint := 0;
  -- The accounts the lines move, in the order they first appear, what the lines add to each, and, once updated, each
  -- one's kind and its balance as the lines move it.
  v_accounts uuid[] := '{}';
  v_deltas bigint[] := '{}';
  v_account record;
  v_updated integer := 0;
  v_kinds text[];
  v_balances bigint[];
  v_missing uuid;
  v_k integer;
  v_ord integer := 0;
  v_line_no smallint;
  -- Each movement's balance after its last line, by its position in p_movements; null when it has no line.
  v_moved bigint[] := array_fill(null::bigint, array[cardinality(p_movements)]);
  -- The entries, column by column.
  e_id text[] := '{}';
  e_movement text[] := '{}';
  e_account uuid[] := '{}';
  e_line smallint[] := '{}';
  e_kind text[] := '{}';
  e_amount bigint[] := '{}';
  e_balance bigint[] := '{}';
  e_at timestamptz[] := '{}';
begin
  foreach v_movement in array p_movements loop
    foreach v_line in array v_movement.lines loop
      continue when v_line.amount = 0;
      v_k := array_position(v_accounts, v_movement.account_id);
      if v_k is null then
        v_accounts := v_accounts || v_movement.account_id;
        v_deltas := v_deltas || 0::bigint;
        v_k := cardinality(v_accounts);
      end if;
      v_deltas[v_k] := v_deltas[v_k] + v_line.amount;
      v_sum := v_sum + v_line.amount;
    end loop;
  end loop;
  if v_sum <> 0 then raise exception 'unbalanced posting: lines sum to %', v_sum; end if;

  -- The new balances in one statement, which also reads each account's kind and balance before. An account of another
  -- tenant, or one its lines would leave below zero, is not updated, and is named below.
  v_kinds := array_fill(null::text, array[cardinality(v_accounts)]);
  v_balances := array_fill(null::bigint, array[cardinality(v_accounts)]);
  for v_account in
    update account a set balance_cents = a.balance_cents + d.delta
      from unnest(v_accounts, v_deltas) d(id, delta)
     where a.id = d.id and a.tenant_id = p_tenant_id and (a.balance_cents + d.delta >= 0 or a.kind = 'SETTLEMENT')
    returning a.id, a.kind, a.balance_cents - d.delta as before
  loop
    v_k := array_position(v_accounts, v_account.id);
    v_kinds[v_k] := v_account.kind;
    v_balances[v_k] := v_account.before;
    v_updated := v_updated + 1;
  end loop;
  if v_updated < cardinality(v_accounts) then
    v_missing := (select x.id from unnest(v_accounts) with ordinality x(id, n) where v_kinds[x.n] is null limit 1);
    if exists (select 1 from account a where a.id = v_missing and a.tenant_id = p_tenant_id) then
      raise exception 'posting would overdraw account %', v_missing;
    end if;
    raise exception 'account % is not an account of tenant %', coalesce(v_missing::text, 'none'), p_tenant_id;
  end if;

  -- Each line with the balance after it, in posting order.
  foreach v_movement in array p_movements loop
    v_ord := v_ord + 1;
    v_line_no := 0;
    foreach v_line in array v_movement.lines loop
      continue when v_line.amount = 0;
      v_k := array_position(v_accounts, v_movement.account_id);
      v_balances[v_k] := v_balances[v_k] + v_line.amount;
      if v_balances[v_k] < 0 and v_kinds[v_k] <> 'SETTLEMENT' then
        raise exception 'posting would overdraw account %', v_movement.account_id;
      end if;
      v_line_no := v_line_no + 1;
      v_moved[v_ord] := v_balances[v_k];
      e_id := e_id || v_line.id;
      e_movement := e_movement || v_movement.id;
      e_account := e_account || v_movement.account_id;
      e_line := e_line || v_line_no;
      e_kind := e_kind || v_line.kind;
      e_amount := e_amount || v_line.amount;
      e_balance := e_balance || v_balances[v_k];
      e_at := e_at || coalesce(v_movement.at, p_at);
    end loop;
  end loop;

  insert into movement (id, statement_id, tenant_id, account_id, operation_id, source, channel, direction, status, payout_status,
                        status_external, amount_cents, fee_cents, balance_after_cents, description, external_ref, end_to_end_id,
                        reverses_movement_id, metadata, created_at)
  select m.id, gen_random_uuid(), p_tenant_id, m.account_id, m.operation_id, m.source, m.channel, m.direction, m.status,
         m.payout_status, m.status_external, m.amount, m.fee, v_moved[m.ordinality], m.description, m.external_ref,
         m.end_to_end_id, m.reverses_movement_id, m.metadata, coalesce(m.at, p_at)
    from unnest(p_movements) with ordinality m
   where v_moved[m.ordinality] is not null;
  insert into ledger_entry (id, movement_id, account_id, line, kind, amount_cents, balance_after_cents, created_at)
  select * from unnest(e_id, e_movement, e_account, e_line, e_kind, e_amount, e_balance, e_at);
  return v_moved;
end $$;

-- Replaced by check_and_count_limits, which counts the debit in the same call: the second call and its upsert were
-- most of what limits cost a TEV (bench/README.md, "Transaction limits").
drop function if exists limit_check(uuid, uuid, text, text, bigint, text, text, text);
drop function if exists count_limits(uuid, text, bigint, text, date, date);

-- A debit checked against its account's limits on a channel (limit_state and limit_refusal, rules.sql), at
-- limits_clock(), under the account's lock the caller holds, and counted in its account's usage (account_limit_usage)
-- when it breaks none: a period that is over starts again from this debit. `refusal` names the limit it breaks (null:
-- none, and it is counted); the periods it is counted in: `period` and `period_of` the day or night (null at night for
-- a payment to a trusted contact, which the night limit does not hold), `month_of` the month (null when no day, night
-- or month limit is in force: nothing is counted). A caller that does not post the debit after all gives it back
-- (give_back_limits) with these periods. The receiver, to tell a trusted contact (is_trusted_contact, read only at
-- night under a night limit): its Pix key, or its branch and account number.
create or replace function check_and_count_limits(p_tenant_id uuid, p_account_id uuid, p_holder_type text, p_channel text,
                                                  p_amount bigint, p_pix_key text, p_branch text, p_account text)
returns table (refusal jsonb, period text, period_of date, month_of date)
language plpgsql as $$
#variable_conflict use_column
declare
  -- Read after the fast path below: limits_clock() is a query of its own, which a tenant without limits need not pay.
  v_at timestamptz;
  s record;
  v_trusted boolean;
  -- The periods apart from the output columns: `month_of` is also a column of the usage row updated below.
  v_period text;
  v_period_of date;
begin
  -- No policy for the tenant's holders of this type and channel, and no values of the account's own: nothing limits
  -- the debit and nothing is counted, as limit_state would answer, without computing the periods (most of a TEV's
  -- cost of this function, paid by every tenant without limits).
  if not exists (select 1 from limit_policy p where p.tenant_id = p_tenant_id and p.holder_type = p_holder_type and p.channel = p_channel)
     and not exists (select 1 from account_limit a where a.account_id = p_account_id) then
    return next;
    return;
  end if;
  v_at := limits_clock();
  select * into s from limit_state(p_tenant_id, p_account_id, p_holder_type, p_channel, v_at);
  v_trusted := s.period = 'NIGHT' and s.night_cents is not null and is_trusted_contact(p_account_id, p_pix_key, p_branch, p_account, v_at);
  refusal := limit_refusal(p_channel, p_amount, v_trusted, s.per_transaction_cents, s.period,
                           case s.period when 'DAY' then s.day_cents else s.night_cents end, s.period_used_cents,
                           s.month_cents, s.month_used_cents);
  if s.day_cents is null and s.night_cents is null and s.month_cents is null then
    return next;
    return;
  end if;
  if not v_trusted then v_period := s.period; v_period_of := s.period_of; end if;
  if refusal is null then
    -- An update of the row limit_state read: an upsert, which tries the insert first, cost twice as much. The insert
    -- only for the account's first counted debit on the channel (the caller's lock on the account orders the two).
    update account_limit_usage u
       set day_of = case when v_period = 'DAY' then v_period_of else u.day_of end,
           day_used_cents = case when v_period is distinct from 'DAY' then u.day_used_cents
                                 when u.day_of = v_period_of then u.day_used_cents + p_amount else p_amount end,
           night_of = case when v_period = 'NIGHT' then v_period_of else u.night_of end,
           night_used_cents = case when v_period is distinct from 'NIGHT' then u.night_used_cents
                                   when u.night_of = v_period_of then u.night_used_cents + p_amount else p_amount end,
           month_of = s.month_of,
           month_used_cents = case when u.month_of = s.month_of then u.month_used_cents + p_amount else p_amount end
     where u.account_id = p_account_id and u.channel = p_channel;
    if not found then
      insert into account_limit_usage (account_id, channel, day_of, day_used_cents, night_of, night_used_cents, month_of, month_used_cents)
      values (p_account_id, p_channel,
              case when v_period = 'DAY' then v_period_of end, case when v_period = 'DAY' then p_amount else 0 end,
              case when v_period = 'NIGHT' then v_period_of end, case when v_period = 'NIGHT' then p_amount else 0 end,
              s.month_of, p_amount);
    end if;
  end if;
  period := v_period;
  period_of := v_period_of;
  month_of := s.month_of;
  return next;
end $$;

-- Gives a debit's amount (or the part of it returned) back to the periods it was counted in, those that are not over:
-- a payout that failed, was cancelled or was returned. The caller holds the account's lock.
create or replace function give_back_limits(p_account_id uuid, p_channel text, p_amount bigint, p_period text, p_period_of date, p_month_of date)
returns void
language plpgsql as $$
begin
  update account_limit_usage u
     set day_used_cents = case when p_period = 'DAY' and u.day_of = p_period_of then greatest(u.day_used_cents - p_amount, 0)
                               else u.day_used_cents end,
         night_used_cents = case when p_period = 'NIGHT' and u.night_of = p_period_of then greatest(u.night_used_cents - p_amount, 0)
                                 else u.night_used_cents end,
         month_used_cents = case when u.month_of = p_month_of then greatest(u.month_used_cents - p_amount, 0) else u.month_used_cents end
   where u.account_id = p_account_id and u.channel = p_channel;
end $$;
