-- Generic plans: PostgreSQL otherwise planned the batch's locking statement again at every call (its input is a new
-- array each time), a sixth of the batch's work (callgrind, bench/README.md).
create or replace function settle_tev_batch(p_items jsonb, p_max_amount bigint)
returns table (ord bigint, code text, tev_id text, status text, reason text, amount_cents bigint, fee_out_cents bigint,
               resolved_at timestamptz, destination_id uuid)
language plpgsql set plan_cache_mode = force_generic_plan as $$
#variable_conflict use_column
declare
  -- The items, read from JSON once.
  v_items tev_batch_item[] := array(select jsonb_populate_recordset(null::tev_batch_item, p_items));
  -- Each item's destination, named by id or found once here by branch and number: the locks below and settle_tev
  -- take it as found (each lookup is a query of its own, 29 µs, which a TEV paid three times).
  v_destinations uuid[] := array(
    select coalesce(x.destination_id, holder_account_by_number(x.tenant_id, x.destination_branch, x.destination_account))
      from unnest(v_items) with ordinality x order by x.ordinality);
  -- Each item's fees, {tev_out of the source, tev_in of the destination}, read once before the locks, as settle_tev
  -- reads them: they choose whether the tenant's fee revenue account is locked, and settle_tev takes them as read.
  v_fees bigint[] := array(
    select array[fo.tev_out, fi.tev_in]
      from unnest(v_items) with ordinality x
     cross join fee_schedule_of(x.source_id, x.tenant_id) fo
     cross join fee_schedule_of(v_destinations[x.ordinality], x.tenant_id) fi
     order by x.ordinality);
  r record;
  v_locked integer;
begin
  -- The accounts settle_tev will lock for these requests, in its order: sources and destinations (by id, or by branch
  -- and number), then a tenant's fee revenue account where a TEV fee applies.
  with i as (
    select x.tenant_id, x.source_id, v_destinations[x.ordinality] as destination_id,
           v_fees[x.ordinality][1] + v_fees[x.ordinality][2] as fees
      from unnest(v_items) with ordinality x
  )
  select lock_account_rows(array(
           select i.source_id from i
           union all
           select i.destination_id from i
           union all
           select f.id from i
             join account f on f.tenant_id = i.tenant_id and f.kind = 'FEE_REVENUE'
            where i.fees > 0))
    into v_locked;

  for r in select x.*, x.ordinality from unnest(v_items) with ordinality x loop
    return query
      select r.ordinality, s.* from settle_tev('SUBMIT', r.tev_id, r.tenant_id, r.source_id, v_destinations[r.ordinality], r.destination_branch,
                                              r.destination_account, r.amount, r.description, r.external_ref, r.end_to_end_id,
                                              r.idempotency_key, r.request_hash, r.origin, p_max_amount, r.ids, null, null,
                                              array[v_fees[r.ordinality][1], v_fees[r.ordinality][2]]) s;
  end loop;
end $$;
