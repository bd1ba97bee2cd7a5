-- TEV requests (SUBMIT) settled together in one transaction, by the rules of settle_tev (tev_refusal, tev_failure,
-- check_and_count_limits, tev_movements, tev_events, in settle_tev.sql). Each request is decided in turn on the
-- accounts as the requests before it left them; what they write is written last, one statement a table for the whole
-- batch (post_movements once a tenant). PostgreSQL parses a table's CHECK constraints again at every statement that
-- writes it (21 of them on the four tables a TEV writes), so a batch pays for them once instead of once a request.
--
-- A request already recorded (a retry), a second request with the same key in the batch, or one whose externalRef a
-- transfer of its source already has, answers ALONE and writes nothing: the caller settles it with settle_tev after
-- the batch, which answers it as it answers any retry or conflict. Those all concern the request's source account,
-- which the batch holds locked, so they are all seen here; anything else conflicting fails the batch as a whole, and
-- the caller posts each request alone.
--
-- Generic plans: PostgreSQL otherwise planned the batch's statements again at every call (their input is a new array
-- each time), a sixth of the batch's work (callgrind, bench/README.md).
create or replace function settle_tev_batch(p_items jsonb, p_max_amount bigint)
returns table (ord bigint, code text, tev_id text, status text, reason text, amount_cents bigint, fee_out_cents bigint,
               resolved_at timestamptz, destination_id uuid)
language plpgsql set plan_cache_mode = force_generic_plan as $$
#variable_conflict use_column
declare
  -- The items, read from JSON once.
  v_items tev_batch_item[] := array(select jsonb_populate_recordset(null::tev_batch_item, p_items));
  -- Each item's destination, named by id or found once here by branch and number (each lookup is a query of its own).
  v_destinations uuid[] := array(
    select coalesce(x.destination_id, holder_account_by_number(x.tenant_id, x.destination_branch, x.destination_account))
      from unnest(v_items) with ordinality x order by x.ordinality);
  -- Each item's fees, {tev_out of the source, tev_in of the destination}, read once before the locks: they choose
  -- whether the tenant's fee revenue account is locked.
  v_fees bigint[] := array(
    select array[fo.tev_out, fi.tev_in]
      from unnest(v_items) with ordinality x
     cross join fee_schedule_of(x.source_id, x.tenant_id) fo
     cross join fee_schedule_of(v_destinations[x.ordinality], x.tenant_id) fi
     order by x.ordinality);
  r record;
  v_locked integer;
  -- Transfers recorded before the batch or by a request before this one: their ids, and `source/externalRef`.
  v_taken text[];
  -- What the batch's settled transfers move on each holder account, not written yet.
  v_accounts uuid[] := '{}';
  v_moved bigint[] := '{}';
  v_k integer;
  v_reason text;
  v_description text;
  v_now timestamptz;
  v_limit_refusal jsonb;
  v_period text;
  v_period_of date;
  v_month_of date;
  -- What the batch writes: the transfers' records, column by column; their postings, each movement with its
  -- tenant; their events.
  t_id text[] := '{}';
  t_tenant uuid[] := '{}';
  t_source uuid[] := '{}';
  t_destination uuid[] := '{}';
  t_amount bigint[] := '{}';
  t_fee_out bigint[] := '{}';
  t_fee_in bigint[] := '{}';
  t_description text[] := '{}';
  t_external_ref text[] := '{}';
  t_end_to_end_id text[] := '{}';
  t_idempotency_key text[] := '{}';
  t_request_hash text[] := '{}';
  t_origin text[] := '{}';
  t_reason text[] := '{}';
  t_source_movement text[] := '{}';
  t_destination_movement text[] := '{}';
  v_movements posting_movement[] := '{}';
  v_movement_tenants uuid[] := '{}';
  v_tenant uuid;
  e_tenant uuid[] := '{}';
  e_account uuid[] := '{}';
  e_pix_account text[] := '{}';
  e_type text[] := '{}';
  e_data jsonb[] := '{}';
begin
  -- The accounts the requests touch, all locked first in the one order every posting follows: sources and
  -- destinations, then a tenant's fee revenue account where a TEV fee applies.
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

  -- Each request's own lookups, by its unique keys: a join, planned once for the connection while the table was new
  -- and its statistics empty, read the whole table at every batch until the table was next analyzed.
  v_taken := array(
    select k.key
      from unnest(v_items) x
     cross join lateral (
       select t.id as key from tev_transfer t where t.id = x.tev_id
       union all
       select t.source_account_id || '/' || t.external_ref from tev_transfer t
        where t.source_account_id = x.source_id and t.external_ref = x.external_ref) k);

  -- Each request with its accounts as they were locked (lock_accounts, a tenant at a time: its rows are locked
  -- already), in the batch's order.
  for r in
    with locked as (
      select t.tenant_id, l.*
        from (select x.tenant_id, array_agg(x.source_id) || array_agg(v_destinations[x.ordinality]) as holders,
                     bool_or(v_fees[x.ordinality][1] + v_fees[x.ordinality][2] > 0) as fees
                from unnest(v_items) with ordinality x group by x.tenant_id) t
       cross join lateral lock_accounts(t.tenant_id, t.holders,
                                        case when t.fees then '{FEE_REVENUE}'::text[] else '{}'::text[] end) l
    )
    select x.tev_id, x.tenant_id, x.source_id, x.amount, x.description, x.external_ref, x.end_to_end_id, x.idempotency_key,
           x.request_hash, x.origin, x.ids, x.ordinality as n, v_fees[x.ordinality][1] as fee_out,
           v_fees[x.ordinality][2] as fee_in,
           s.id as s_id, s.refusal as s_refusal, s.may_move as s_may_move, s.approver_holder_id as s_approver,
           s.balance_cents as s_balance, s.holder_type as s_holder_type, s.agency as s_agency, s.number as s_number,
           s.holder_name as s_name, s.holder_document as s_document, s.pix_account_id as s_pix_account,
           d.id as d_id, d.status as d_status, d.holder_status as d_holder_status, d.may_move as d_may_move,
           d.agency as d_agency, d.number as d_number, d.holder_name as d_name, d.holder_document as d_document,
           d.pix_account_id as d_pix_account, f.id as rev_id
      from unnest(v_items) with ordinality x
      left join locked s on s.tenant_id = x.tenant_id and s.kind = 'HOLDER' and s.id = x.source_id
      left join locked d on d.tenant_id = x.tenant_id and d.kind = 'HOLDER' and d.id = v_destinations[x.ordinality]
      left join locked f on f.tenant_id = x.tenant_id and f.kind = 'FEE_REVENUE'
     order by x.ordinality
  loop
    ord := r.n;
    tev_id := r.tev_id;
    status := null; reason := null; amount_cents := null; fee_out_cents := null; resolved_at := null; destination_id := null;
    if r.tev_id = any(v_taken) or r.source_id || '/' || r.external_ref = any(v_taken) then
      code := 'ALONE';
      return next;
      continue;
    end if;
    v_taken := v_taken || r.tev_id || (r.source_id || '/' || r.external_ref);

    select * into code, destination_id
      from tev_refusal('SUBMIT', r.origin, r.s_id, r.s_refusal, r.s_approver, r.d_id, r.d_status, r.d_holder_status);
    if code is not null then return next; continue; end if;

    if r.fee_out + r.fee_in > 0 and r.rev_id is null then raise exception 'tenant % has no fee revenue account', r.tenant_id; end if;
    v_description := tev_description(r.description, r.d_name);
    v_reason := tev_failure('SUBMIT', null, r.origin, r.s_approver, r.s_may_move, r.d_may_move, r.amount, p_max_amount,
                            r.fee_out, r.fee_in, r.s_balance + coalesce(v_moved[array_position(v_accounts, r.s_id)], 0));
    if v_reason is null then
      select * into v_limit_refusal, v_period, v_period_of, v_month_of
        from check_and_count_limits(r.tenant_id, r.s_id, r.s_holder_type, 'TEV', r.amount, null, r.d_agency, r.d_number);
      if v_limit_refusal is not null then v_reason := 'LIMIT_EXCEEDED'; end if;
    end if;

    v_now := clock_timestamp();
    t_id := t_id || r.tev_id;
    t_tenant := t_tenant || r.tenant_id;
    t_source := t_source || r.s_id;
    t_destination := t_destination || r.d_id;
    t_amount := t_amount || r.amount;
    t_fee_out := t_fee_out || r.fee_out;
    t_fee_in := t_fee_in || r.fee_in;
    t_description := t_description || v_description;
    t_external_ref := t_external_ref || r.external_ref;
    t_end_to_end_id := t_end_to_end_id || r.end_to_end_id;
    t_idempotency_key := t_idempotency_key || r.idempotency_key;
    t_request_hash := t_request_hash || r.request_hash;
    t_origin := t_origin || r.origin;
    t_reason := t_reason || v_reason;
    t_source_movement := t_source_movement || case when v_reason is null then r.ids[1] end;
    t_destination_movement := t_destination_movement || case when v_reason is null then r.ids[2] end;
    select e_tenant || array_agg(r.tenant_id), e_account || array_agg(e.account_id), e_pix_account || array_agg(e.pix_account_id),
           e_type || array_agg(e.type), e_data || array_agg(e.data)
      into e_tenant, e_account, e_pix_account, e_type, e_data
      from tev_events(v_reason, r.ids, r.tev_id, r.external_ref, r.end_to_end_id, v_now, r.amount, r.fee_out, r.fee_in,
                      v_description, r.s_id, r.s_pix_account, r.s_agency, r.s_number,
                      r.d_id, r.d_pix_account, r.d_agency, r.d_number) e;

    if v_reason is null then
      v_movements := v_movements || tev_movements(
        r.ids, r.tev_id, r.external_ref, r.end_to_end_id, now(), v_now, r.amount, r.fee_out, r.fee_in, v_description,
        r.s_id, r.s_agency, r.s_number, r.s_name, r.s_document,
        r.d_id, r.d_agency, r.d_number, r.d_name, r.d_document, r.rev_id);
      v_movement_tenants := v_movement_tenants || array_fill(r.tenant_id, array[3]);
      -- What it moves on its holders' accounts, for the requests after it: the source pays the amount and its fee,
      -- the destination receives the amount less its fee.
      v_k := array_position(v_accounts, r.s_id);
      if v_k is null then v_accounts := v_accounts || r.s_id; v_moved := v_moved || 0::bigint; v_k := cardinality(v_accounts); end if;
      v_moved[v_k] := v_moved[v_k] - r.amount - r.fee_out;
      v_k := array_position(v_accounts, r.d_id);
      if v_k is null then v_accounts := v_accounts || r.d_id; v_moved := v_moved || 0::bigint; v_k := cardinality(v_accounts); end if;
      v_moved[v_k] := v_moved[v_k] + r.amount - r.fee_in;
    end if;

    code := case when v_reason is null then 'DONE' else 'FAILED' end;
    status := code;
    reason := v_reason;
    amount_cents := r.amount;
    fee_out_cents := case when v_reason is null then r.fee_out else 0 end;
    resolved_at := now();
    return next;
  end loop;

  -- The records first, as settle_tev writes them (their movements are checked at commit), then the postings, which
  -- check every balance again line by line, then the events.
  insert into tev_transfer (id, tenant_id, source_account_id, destination_account_id, amount_cents, fee_out_cents, fee_in_cents,
                            description, external_ref, end_to_end_id, idempotency_key, request_hash, origin, status, reason,
                            source_movement_id, destination_movement_id, resolved_at)
  select t.id, t.tenant_id, t.source_id, t.destination_id, t.amount, t.fee_out, t.fee_in, t.description, t.external_ref,
         t.end_to_end_id, t.idempotency_key, t.request_hash, t.origin, case when t.reason is null then 'DONE' else 'FAILED' end,
         t.reason, t.source_movement_id, t.destination_movement_id, now()
    from unnest(t_id, t_tenant, t_source, t_destination, t_amount, t_fee_out, t_fee_in, t_description, t_external_ref,
                t_end_to_end_id, t_idempotency_key, t_request_hash, t_origin, t_reason, t_source_movement, t_destination_movement)
         t(id, tenant_id, source_id, destination_id, amount, fee_out, fee_in, description, external_ref, end_to_end_id,
           idempotency_key, request_hash, origin, reason, source_movement_id, destination_movement_id);
  for v_tenant in select distinct u.tenant_id from unnest(v_movement_tenants) u(tenant_id) loop
    perform post_movements(v_tenant, now(), array(
      select v_movements[i] from generate_subscripts(v_movements, 1) i where v_movement_tenants[i] = v_tenant order by i));
  end loop;
  perform record_events(e_tenant, e_account, e_pix_account, e_type, e_data);
end $$;
