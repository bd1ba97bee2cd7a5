-- Replaced by post_pix_debits: the tenant's side is posted with the payers' by post_movements.
drop function if exists post_tenant_credits(jsonb);

-- Generic plans: PostgreSQL otherwise planned its statements on the batch's JSON again at every call.
create or replace function post_pix_debits(p_debits jsonb)
returns void
language plpgsql set plan_cache_mode = force_generic_plan as $$
#variable_conflict use_column
declare
  v_at timestamptz;
  v_tenant uuid;
  v_settlement uuid;
  v_revenue uuid;
begin
  -- Posts accepted Pix debits (debit_pix_payout_payer's `debit`), their payers locked by the caller: each payer's debit,
  -- each payout's amount to its tenant's settlement account and its fee to the fee revenue account. These two accounts
  -- take every debit of a tenant, so they are locked last, after every holder account of the transaction (the order
  -- every posting follows: holders by id, then the tenants' own accounts by id), and only here: parallel batches of
  -- one tenant queue only for this statement and their commit.
  perform lock_account_rows(array(
           select s.id from account s
            where s.kind = 'SETTLEMENT' and s.tenant_id in (select (d->>'tenant_id')::uuid from jsonb_array_elements(p_debits) d)
           union all
           select r.id from account r
            where r.kind = 'FEE_REVENUE'
              and r.tenant_id in (select (d->>'tenant_id')::uuid from jsonb_array_elements(p_debits) d where (d->>'fee')::bigint > 0)));

  -- The time is taken after the locks, so that on each of these accounts the postings' times follow their commit
  -- order; the tenant's side of each debit one microsecond apart in batch order, so that entries ordered by time are
  -- in balance order.
  v_at := clock_timestamp();
  for v_tenant in select distinct (d->>'tenant_id')::uuid from jsonb_array_elements(p_debits) d loop
    select s.id, r.id into v_settlement, v_revenue
      from account s left join account r on r.tenant_id = v_tenant and r.kind = 'FEE_REVENUE'
     where s.tenant_id = v_tenant and s.kind = 'SETTLEMENT';
    -- The payers' movements as their debits wrote them, then the tenant's: typed, in that order.
    perform post_movements(v_tenant, v_at, array(
      select m.movement
        from (select 0 as side, d.ord, jsonb_populate_record(null::posting_movement, d.debit->'movement') as movement
                from jsonb_array_elements(p_debits) with ordinality d(debit, ord)
               where (d.debit->>'tenant_id')::uuid = v_tenant
              union all
              -- ids: the payout's 7, the settlement's and fee revenue's movements 2nd and 3rd, their entries 6th and 7th.
              select c.side, d.ord, posting_movement_of(
                       id => d.debit->'ids'->>c.movement_index,
                       account_id => case c.account_kind when 'SETTLEMENT' then v_settlement else v_revenue end,
                       operation_id => d.debit->>'payout_id', source => c.account_kind, channel => 'PIX', direction => 'CREDIT',
                       status => c.status, status_external => c.status_external, amount => (d.debit->>c.amount_field)::bigint,
                       description => c.description || (d.debit->>'payout_id'), at => v_at + make_interval(secs => d.ord / 1e6),
                       lines => array[posting_line_of(d.debit->'ids'->>c.entry_index, c.line_kind, (d.debit->>c.amount_field)::bigint)])
                from jsonb_array_elements(p_debits) with ordinality d(debit, ord)
               cross join (values (1, 1, 5, 'SETTLEMENT', 'amount', 'PRIMARY', 'PENDING', 'PROCESSING', 'Pix out '),
                                  (2, 2, 6, 'FEE_REVENUE', 'fee', 'FEE', 'DONE', 'SUCCESS', 'Tarifa Pix '))
                    c(side, movement_index, entry_index, account_kind, amount_field, line_kind, status, status_external, description)
               where (d.debit->>'tenant_id')::uuid = v_tenant) m
       order by m.side, m.ord));
  end loop;
end $$;
