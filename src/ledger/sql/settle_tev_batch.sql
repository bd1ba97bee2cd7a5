create or replace function settle_tev_batch(p_items jsonb, p_max_amount bigint)
returns table (ord bigint, code text, tev_id text, status text, reason text, amount_cents bigint, fee_out_cents bigint,
               resolved_at timestamptz, destination_id uuid)
language plpgsql as $$
#variable_conflict use_column
declare
  -- The items, read from JSON once.
  v_items tev_batch_item[] := array(select jsonb_populate_recordset(null::tev_batch_item, p_items));
  r record;
  v_locked integer;
begin
  -- The accounts settle_tev will lock for these requests: sources, destinations (by id, or by branch and number
  -- normalised as settle_tev does), and a tenant's fee revenue account where a TEV fee may apply.
  select count(*) into v_locked from (
    select a.id from account a
     where a.id in (
       select i.source_id from unnest(v_items) i
       union all
       select i.destination_id from unnest(v_items) i
       union all
       select d.id from unnest(v_items) i
         join account d on d.tenant_id = i.tenant_id and d.kind = 'HOLDER'
                       and d.agency = lpad(coalesce(nullif(ltrim(i.destination_branch, '0'), ''), '0'), 4, '0')
                       and d.number = ltrim(i.destination_account, '0')
        where i.destination_id is null
       union all
       select f.id from unnest(v_items) i
         join account f on f.tenant_id = i.tenant_id and f.kind = 'FEE_REVENUE'
        where exists (select 1 from fee_schedule s
                       where s.tenant_id = i.tenant_id and (s.tev_out_cents > 0 or s.tev_in_cents > 0)
                         and (s.account_id is null or s.account_id = i.source_id or s.account_id = i.destination_id
                              or (i.destination_id is null and s.account_id in (
                                    select d.id from account d
                                     where d.tenant_id = i.tenant_id and d.kind = 'HOLDER'
                                       and d.agency = lpad(coalesce(nullif(ltrim(i.destination_branch, '0'), ''), '0'), 4, '0')
                                       and d.number = ltrim(i.destination_account, '0'))))))
     order by a.kind <> 'HOLDER', a.id
       for no key update of a) locked;

  for r in select x.*, x.ordinality from unnest(v_items) with ordinality x loop
    return query
      select r.ordinality, s.* from settle_tev('SUBMIT', r.tev_id, r.tenant_id, r.source_id, r.destination_id, r.destination_branch,
                                              r.destination_account, r.amount, r.description, r.external_ref, r.end_to_end_id,
                                              r.idempotency_key, r.origin, p_max_amount, r.ids, null, null) s;
  end loop;
end $$;
