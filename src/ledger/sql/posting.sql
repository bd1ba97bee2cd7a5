-- The posting engine's shared steps. A posting function locks its accounts with `lock_accounts`, applies its rules to
-- what they hold (src/ledger/sql/rules.sql), takes the time (clock_timestamp(), after the locks) and writes its lines
-- with `post_movements`, the one writer of movements, ledger entries and balances.

-- A statement's `date`: ISO 8601 in UTC with milliseconds, as JavaScript's toISOString() writes it.
create or replace function iso_utc(p_at timestamptz) returns text
language sql immutable parallel safe as $$
  select to_char(p_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
$$;

-- A statement's `paymentDate`: `YYYY-MM-DD HH:mm:ss-03:00`, the wall clock and offset of America/Sao_Paulo.
create or replace function sao_paulo_payment_date(p_at timestamptz) returns text
language sql stable parallel safe as $$
  select to_char(l.local, 'YYYY-MM-DD HH24:MI:SS') || case when l.minutes < 0 then '-' else '+' end
         || lpad((abs(l.minutes) / 60)::text, 2, '0') || ':' || lpad((abs(l.minutes) % 60)::text, 2, '0')
    from (select p_at at time zone 'America/Sao_Paulo' as local,
                 round(extract(epoch from ((p_at at time zone 'America/Sao_Paulo') - (p_at at time zone 'UTC'))) / 60)::integer as minutes) l
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
-- account_refusal's answer (rules.sql). Planned once per connection (a generic plan): PostgreSQL otherwise planned it
-- again at every call, which made the call about four times as long (0.26 ms against 0.06 ms in a TEV).
drop function if exists lock_accounts(uuid, uuid[], text[]);
create function lock_accounts(p_tenant_id uuid, p_holder_ids uuid[], p_own_kinds text[])
returns table (id uuid, kind text, status text, balance_cents bigint, agency text, number text, pix_account_id text,
               core_account_id text, approver_holder_id uuid, holder_status text, onboarding_step text, holder_name text,
               holder_document text, refusal text, may_move boolean)
language sql volatile set plan_cache_mode = force_generic_plan as $$
  select a.id, a.kind, a.status, a.balance_cents, a.agency, a.number, a.pix_account_id, a.core_account_id, a.approver_holder_id,
         h.status, h.onboarding_step, h.name, h.document, account_refusal(a.status, h.status, h.onboarding_step),
         account_may_move_money(a.status, h.status, h.onboarding_step)
    from account a
    left join holder h on h.id = a.holder_id
   -- The rows themselves, with no subquery: a row that changed while this waited for its lock is checked again as it
   -- now is. One arm per kind, each read through its own index (the tenant's own accounts through their unique ones).
   where a.tenant_id = p_tenant_id
     and ((a.kind = 'HOLDER' and a.id = any(p_holder_ids))
          or (a.kind = 'SETTLEMENT' and 'SETTLEMENT' = any(p_own_kinds))
          or (a.kind = 'FEE_REVENUE' and 'FEE_REVENUE' = any(p_own_kinds)))
   order by a.kind <> 'HOLDER', a.id
     for no key update of a
$$;

-- Writes the movements of one posting of one tenant, on accounts the caller locked (`lock_accounts`), at `p_at`: each
-- movement's row, its lines as ledger entries with the balance after each, and the new balances. Answers each movement
-- written, in order, with its balance after.
--
-- `p_movements`: a JSON array of movements, each {id, account_id, operation_id, source, channel, direction, status,
-- payout_status, status_external, amount, fee, description, external_ref, end_to_end_id, reverses_movement_id,
-- metadata, at?, lines: [{id, kind, amount}]}, amounts signed on the lines, applied in order; `at`, when given, is the
-- movement's time instead of `p_at` (a batch's movements on one account, apart in batch order). A line of 0 cents writes no
-- entry, and a movement left with no line is not written (a fee of 0 takes nothing from anyone).
--
-- Checked before anything is written, else it raises: the lines sum to zero (double entry), every account is the
-- tenant's, and no balance goes below zero after any line but the settlement account's (money at the Pix provider).
-- Raises the refusal of a posting whose lines break a rule; answers true otherwise. Called by post_movements before
-- anything is written.
create or replace function posting_checked(p_tenant_id uuid, p_sum bigint, p_foreign text, p_overdrawn uuid) returns boolean
language plpgsql immutable as $$
begin
  if p_sum <> 0 then raise exception 'unbalanced posting: lines sum to %', p_sum; end if;
  if p_foreign is not null then raise exception 'account % is not an account of tenant %', p_foreign, p_tenant_id; end if;
  if p_overdrawn is not null then raise exception 'posting would overdraw account %', p_overdrawn; end if;
  return true;
end $$;

create or replace function post_movements(p_tenant_id uuid, p_at timestamptz, p_movements jsonb)
returns table (movement_id text, account_id uuid, balance_after_cents bigint)
language sql volatile as $$
  -- One statement, the JSON read once. `checked` is evaluated once, before the first row of any write: it raises
  -- when the lines break a rule, and nothing is written.
  with movement_in as (
    select m.ord, m.item, (m.item->>'account_id')::uuid as account_id, coalesce((m.item->>'at')::timestamptz, p_at) as at
      from jsonb_array_elements(p_movements) with ordinality m(item, ord)
  ), account_in as (
    -- The accounts through the primary key, however many rows the plan expects of the JSON.
    select a.id, a.kind, a.balance_cents from account a
     where a.id = any(array(select m.account_id from movement_in m)) and a.tenant_id = p_tenant_id
  ), line as (
    -- Each line with the balance after it: the account's locked balance plus its lines so far, in posting order.
    select m.ord, m.item, m.at, m.account_id, l.entry->>'id' as entry_id, l.entry->>'kind' as kind, (l.entry->>'amount')::bigint as amount,
           a.id as known, a.kind as account_kind, row_number() over (partition by m.ord order by l.n)::smallint as line,
           a.balance_cents + sum((l.entry->>'amount')::bigint) over (partition by m.account_id order by m.ord, l.n) as balance_after
      from movement_in m
      cross join jsonb_array_elements(m.item->'lines') with ordinality l(entry, n)
      left join account_in a on a.id = m.account_id
     where (l.entry->>'amount')::bigint <> 0
  ), checked as (
    select posting_checked(p_tenant_id, coalesce(sum(amount), 0)::bigint, (array_agg(coalesce(account_id::text, 'none')) filter (where known is null))[1],
                           (array_agg(account_id) filter (where balance_after < 0 and account_kind <> 'SETTLEMENT'))[1]) as ok
      from line
  ), moved as (
    -- Each movement with a line, and its balance after its last line.
    select distinct on (ord) ord, item, at, account_id, balance_after from line where (select ok from checked) order by ord, line desc
  ), movements as (
    insert into movement (id, statement_id, tenant_id, account_id, operation_id, source, channel, direction, status, payout_status,
                          status_external, amount_cents, fee_cents, balance_after_cents, description, external_ref, end_to_end_id,
                          reverses_movement_id, metadata, created_at)
    select item->>'id', gen_random_uuid(), p_tenant_id, account_id, item->>'operation_id', item->>'source', item->>'channel',
           item->>'direction', item->>'status', item->>'payout_status', item->>'status_external', (item->>'amount')::bigint,
           (item->>'fee')::bigint, balance_after, item->>'description', item->>'external_ref', item->>'end_to_end_id',
           item->>'reverses_movement_id', item->'metadata', at
      from moved
    returning 1
  ), entries as (
    insert into ledger_entry (id, movement_id, account_id, line, kind, amount_cents, balance_after_cents, created_at)
    select entry_id, item->>'id', account_id, line, kind, amount, balance_after, at
      from line where (select ok from checked)
    returning 1
  ), balances as (
    update account a set balance_cents = last.balance_after
      from (select distinct on (account_id) account_id, balance_after from line where (select ok from checked)
             order by account_id, ord desc, line desc) last
     where a.id = last.account_id and a.id = any(array(select m.account_id from movement_in m))
    returning 1
  )
  select moved.item->>'id', moved.account_id, moved.balance_after from moved order by moved.ord
$$;
