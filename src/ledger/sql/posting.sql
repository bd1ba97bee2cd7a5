-- The posting engine's shared steps. A posting function locks its accounts with `lock_accounts`, applies its rules to
-- what they hold, takes the time (clock_timestamp(), after the locks) and writes its lines with `post_movements`.
-- settle_tev, debit_pix_payout and post_tenant_credits do the same steps inline, in the same lock order.

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

-- The Pix fees in force for a holder account of the tenant: the account's own value, else its tenant's, else 0 (the
-- rule of fees/store.ts). No row when the tenant has no such holder account.
create or replace function pix_fees(p_tenant_id uuid, p_account_id uuid)
returns table (pix_out bigint, pix_in bigint, qr_out bigint)
language sql stable as $$
  select coalesce(own.pix_out_cents, ten.pix_out_cents, 0), coalesce(own.pix_in_cents, ten.pix_in_cents, 0),
         coalesce(own.qr_out_cents, ten.qr_out_cents, 0)
    from account a
    left join fee_schedule own on own.account_id = a.id
    left join fee_schedule ten on ten.tenant_id = a.tenant_id and ten.account_id is null
   where a.id = p_account_id and a.tenant_id = p_tenant_id and a.kind = 'HOLDER'
$$;

-- Locks a posting's accounts of one tenant for the rest of the transaction, in the one order every posting follows:
-- the holders by id, then the tenant's own accounts (`p_own_kinds`: SETTLEMENT, FEE_REVENUE) by id. Two postings on
-- the same accounts, in any direction, queue instead of deadlocking; the tenant's own accounts, which take every Pix
-- of the tenant, are held for the shortest time. `for no key update`: a posting changes balances, never keys, so it
-- does not conflict with the key share locks of foreign-key checks. Volatile, so it is never inlined: every row is
-- locked, whatever the caller reads of them.
create or replace function lock_accounts(p_tenant_id uuid, p_holder_ids uuid[], p_own_kinds text[])
returns table (id uuid, kind text, status text, balance_cents bigint, agency text, number text, pix_account_id text,
               core_account_id text, may_move boolean)
language sql volatile as $$
  select a.id, a.kind, a.status, a.balance_cents, a.agency, a.number, a.pix_account_id, a.core_account_id,
         coalesce(account_may_move_money(a.status, h.status, h.onboarding_step), false)
    from account a
    left join holder h on h.id = a.holder_id
   where a.id in (select x.id from account x where x.id = any(p_holder_ids) and x.tenant_id = p_tenant_id and x.kind = 'HOLDER'
                  union all
                  -- One arm per kind, so each reads the tenant's account through its own unique index.
                  select x.id from account x where 'SETTLEMENT' = any(p_own_kinds) and x.tenant_id = p_tenant_id and x.kind = 'SETTLEMENT'
                  union all
                  select x.id from account x where 'FEE_REVENUE' = any(p_own_kinds) and x.tenant_id = p_tenant_id and x.kind = 'FEE_REVENUE')
   order by a.kind <> 'HOLDER', a.id
     for no key update of a
$$;

-- Writes the movements of one posting of one tenant, on accounts the caller locked (`lock_accounts`), at `p_at`: each
-- movement's row, its lines as ledger entries with the balance after each, and the new balances. Answers each movement
-- written, in order, with its balance after.
--
-- `p_movements`: a JSON array of movements, each {id, account_id, operation_id, source, channel, direction, status,
-- payout_status, status_external, amount, fee, description, external_ref, end_to_end_id, reverses_movement_id,
-- metadata, lines: [{id, kind, amount}]}, amounts signed on the lines, applied in order. A line of 0 cents writes no
-- entry, and a movement left with no line is not written (a fee of 0 takes nothing from anyone).
--
-- Checked before anything is written, else it raises: the lines sum to zero (double entry), every account is the
-- tenant's, and no balance goes below zero after any line but the settlement account's (money at the Pix provider).
create or replace function post_movements(p_tenant_id uuid, p_at timestamptz, p_movements jsonb)
returns table (movement_id text, account_id uuid, balance_after_cents bigint)
language plpgsql as $$
#variable_conflict use_column
declare
  v_sum bigint;
  v_foreign uuid;
  v_overdrawn uuid;
begin
  with line as (
    select (m.item->>'account_id')::uuid as account_id, a.id as known, a.kind, (l.entry->>'amount')::bigint as amount,
           a.balance_cents + sum((l.entry->>'amount')::bigint) over (partition by m.item->>'account_id' order by m.ord, l.n) as balance_after
      from jsonb_array_elements(p_movements) with ordinality m(item, ord)
      cross join jsonb_array_elements(m.item->'lines') with ordinality l(entry, n)
      left join account a on a.id = (m.item->>'account_id')::uuid and a.tenant_id = p_tenant_id
     where (l.entry->>'amount')::bigint <> 0
  )
  select coalesce(sum(amount), 0), (array_agg(account_id) filter (where known is null))[1],
         (array_agg(account_id) filter (where balance_after < 0 and kind <> 'SETTLEMENT'))[1]
    into v_sum, v_foreign, v_overdrawn
    from line;
  if v_sum <> 0 then raise exception 'unbalanced posting: lines sum to %', v_sum; end if;
  if v_foreign is not null then raise exception 'account % is not an account of tenant %', v_foreign, p_tenant_id; end if;
  if v_overdrawn is not null then raise exception 'posting would overdraw account %', v_overdrawn; end if;

  return query
    with line as (
      -- Each line with the balance after it: the account's locked balance plus its lines so far, in posting order.
      select m.ord, m.item, l.entry, row_number() over (partition by m.ord order by l.n) as line, a.id as account_id,
             (a.balance_cents + sum((l.entry->>'amount')::bigint) over (partition by a.id order by m.ord, l.n))::bigint as balance_after
        from jsonb_array_elements(p_movements) with ordinality m(item, ord)
        cross join jsonb_array_elements(m.item->'lines') with ordinality l(entry, n)
        join account a on a.id = (m.item->>'account_id')::uuid and a.tenant_id = p_tenant_id
       where (l.entry->>'amount')::bigint <> 0
    ), moved as (
      select ord, item, account_id, (array_agg(balance_after order by line desc))[1] as balance_after
        from line group by ord, item, account_id
    ), movements as (
      insert into movement (id, statement_id, tenant_id, account_id, operation_id, source, channel, direction, status, payout_status,
                            status_external, amount_cents, fee_cents, balance_after_cents, description, external_ref, end_to_end_id,
                            reverses_movement_id, metadata, created_at)
      select item->>'id', gen_random_uuid(), p_tenant_id, account_id, item->>'operation_id', item->>'source', item->>'channel',
             item->>'direction', item->>'status', item->>'payout_status', item->>'status_external', (item->>'amount')::bigint,
             (item->>'fee')::bigint, balance_after, item->>'description', item->>'external_ref', item->>'end_to_end_id',
             item->>'reverses_movement_id', item->'metadata', p_at
        from moved
      returning 1
    ), entries as (
      insert into ledger_entry (id, movement_id, account_id, line, kind, amount_cents, balance_after_cents, created_at)
      select entry->>'id', item->>'id', account_id, line, entry->>'kind', (entry->>'amount')::bigint, balance_after, p_at
        from line
      returning 1
    ), balances as (
      update account a set balance_cents = last.balance_after
        from (select distinct on (account_id) account_id, balance_after from line order by account_id, ord desc, line desc) last
       where a.id = last.account_id
      returning 1
    )
    select moved.item->>'id', moved.account_id, moved.balance_after from moved order by moved.ord;
end $$;
