create or replace function post_tenant_credits(p_credits jsonb)
returns void
language plpgsql as $$
#variable_conflict use_column
begin
  -- The tenant's side of Pix debits: each payout's amount to its tenant's settlement account and its fee to the fee
  -- revenue account. These two accounts take every debit of a tenant, so they are locked last, after every holder
  -- account of the transaction (the order every posting follows: holders by id, then the tenants' own accounts by
  -- id), and only here: parallel batches of one tenant queue only for this statement and their commit.
  perform 1 from account a
   where (a.kind = 'SETTLEMENT' and a.tenant_id in (select (c->>'tenant_id')::uuid from jsonb_array_elements(p_credits) c))
      or (a.kind = 'FEE_REVENUE' and a.tenant_id in (select (c->>'tenant_id')::uuid from jsonb_array_elements(p_credits) c where (c->>'fee')::bigint > 0))
   order by a.id
     for no key update of a;

  -- The time is taken after the locks, so that on each of these accounts the postings' times follow their commit
  -- order. The inserts run with the update (PostgreSQL runs every data-modifying WITH, read or not).
  with c as (
    -- One microsecond apart in batch order: on each account, entries ordered by time are in balance order.
    select c.payout_id, c.tenant_id, c.amount, c.fee, c.ids, t.at + make_interval(secs => c.ord / 1e6) as at,
           s.id as settlement_id, s.balance_cents + sum(c.amount) over w as settlement_after,
           r.id as revenue_id, r.balance_cents + sum(c.fee) over w as revenue_after
      from rows from (jsonb_to_recordset(p_credits) as (payout_id text, tenant_id uuid, amount bigint, fee bigint, ids text[]))
             with ordinality as c(payout_id, tenant_id, amount, fee, ids, ord)
      cross join (select clock_timestamp() as at) t
      join account s on s.tenant_id = c.tenant_id and s.kind = 'SETTLEMENT'
      left join account r on r.tenant_id = c.tenant_id and r.kind = 'FEE_REVENUE'
    window w as (partition by c.tenant_id order by c.ord)
  ), movements as (
    insert into movement (id, statement_id, tenant_id, account_id, operation_id, source, channel, direction, status, payout_status,
                          status_external, amount_cents, fee_cents, balance_after_cents, description, external_ref, end_to_end_id,
                          reverses_movement_id, metadata, created_at)
    select ids[1], gen_random_uuid(), tenant_id, settlement_id, payout_id, 'SETTLEMENT', 'PIX', 'CREDIT', 'PENDING', null, 'PROCESSING',
           amount, 0, settlement_after, 'Pix out ' || payout_id, null, null, null, '{}'::jsonb, at
      from c
    union all
    select ids[2], gen_random_uuid(), tenant_id, revenue_id, payout_id, 'FEE_REVENUE', 'PIX', 'CREDIT', 'DONE', null, 'SUCCESS',
           fee, 0, revenue_after, 'Tarifa Pix ' || payout_id, null, null, null, '{}'::jsonb, at
      from c where fee > 0
    returning 1
  ), entries as (
    insert into ledger_entry (id, movement_id, account_id, line, kind, amount_cents, balance_after_cents, created_at)
    select ids[3], ids[1], settlement_id, 1, 'PRIMARY', amount, settlement_after, at from c
    union all
    select ids[4], ids[2], revenue_id, 1, 'FEE', fee, revenue_after, at from c where fee > 0
    returning 1
  )
  update account a set balance_cents = a.balance_cents + t.delta
    from (select settlement_id as id, sum(amount) as delta from c group by settlement_id
          union all
          select revenue_id, sum(fee) from c where fee > 0 group by revenue_id) t
   where a.id = t.id;
end $$;
