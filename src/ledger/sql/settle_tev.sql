create or replace function settle_tev(
  p_mode text,                -- SUBMIT: checks, then settle | DEFER: checks, then record PROCESSING and hand off
                              -- RESOLVE: settle without the request-time checks | FAIL: resolve FAILED with p_fail_reason
  p_tev_id text,
  p_tenant_id uuid,
  p_source_id uuid,
  p_destination_id uuid,      -- or the branch and account below
  p_destination_branch text,
  p_destination_account text,
  p_amount bigint,
  p_description text,
  p_external_ref text,
  p_end_to_end_id text,
  p_idempotency_key text,
  p_origin text,
  p_max_amount bigint,
  p_ids text[],               -- cuid2 ids made by the caller: 3 movements, then 5 entries
  p_handoff jsonb,            -- DEFER: the workflow_start row that hands the transfer to its workflow
  p_fail_reason text
) returns table (code text, tev_id text, status text, reason text, amount_cents bigint, fee_out_cents bigint,
                 resolved_at timestamptz, destination_id uuid)
language plpgsql as $$
#variable_conflict use_column
declare
  r record;
  v_src record;
  v_dst record;
  v_has_src boolean := false;
  v_has_dst boolean := false;
  -- The destination's id apart from its record: PL/pgSQL cannot read a field of a record never assigned.
  v_dst_id uuid;
  v_settling boolean := false;
  v_rev_id uuid;
  v_rev_balance bigint;
  v_tev tev_transfer;
  v_agency text := lpad(coalesce(nullif(ltrim(p_destination_branch, '0'), ''), '0'), 4, '0');
  v_number text := ltrim(p_destination_account, '0');
  v_hash text;
  v_fee_out bigint;
  v_fee_in bigint;
  v_fees bigint;
  v_reason text;
  v_description text;
  v_now timestamptz;
  v_local timestamp;
  v_offset integer;
  v_when jsonb;
  v_event jsonb;
begin
  -- A mode this function does not know would skip the request-time checks like RESOLVE: refused instead (an api
  -- older than the rename of HOLD to DEFER, say, while it still runs beside the new function).
  if p_mode not in ('SUBMIT', 'DEFER', 'RESOLVE', 'FAIL') then
    raise exception 'settle_tev: unknown mode %', p_mode;
  end if;
  tev_id := p_tev_id;
  -- One statement finds and locks the accounts in one order (transfers touching the same accounts in any
  -- direction queue instead of deadlocking), with their holders and fees; the tenant's fee revenue account
  -- joins them when a TEV fee may apply.
  for r in
    select a.id, a.kind, a.status, a.balance_cents, a.agency, a.number, a.pix_account_id, a.approver_holder_id,
           h.status as holder_status, h.onboarding_step, h.name, h.document,
           coalesce(account_may_move_money(a.status, h.status, h.onboarding_step), false) as may_move,
           coalesce(own.tev_out_cents, ten.tev_out_cents, 0) as fee_out, coalesce(own.tev_in_cents, ten.tev_in_cents, 0) as fee_in
      from account a
      left join holder h on h.id = a.holder_id
      left join fee_schedule own on own.account_id = a.id
      left join fee_schedule ten on ten.tenant_id = a.tenant_id and ten.account_id is null
     where a.tenant_id = p_tenant_id
       and ((a.kind = 'HOLDER' and (a.id = p_source_id or a.id = p_destination_id
                                    or (p_destination_id is null and a.agency = v_agency and a.number = v_number)))
            -- Any fee that may apply: the tenant's, or the source's or destination's own (by id, or by branch and
            -- number). The fee revenue account must be locked here, after the holders.
            or (a.kind = 'FEE_REVENUE' and exists (
                  select 1 from fee_schedule f
                   where f.tenant_id = p_tenant_id and (f.tev_out_cents > 0 or f.tev_in_cents > 0)
                     and (f.account_id is null or f.account_id = p_source_id or f.account_id = p_destination_id
                          or (p_destination_id is null and f.account_id in (
                                select d.id from account d
                                 where d.tenant_id = p_tenant_id and d.kind = 'HOLDER' and d.agency = v_agency and d.number = v_number))))))
     -- Holders first, then the tenant's own accounts: the order every posting locks in (post_tenant_credits).
     order by a.kind <> 'HOLDER', a.id
       for no key update of a
  loop
    if r.kind = 'FEE_REVENUE' then
      v_rev_id := r.id;
      v_rev_balance := r.balance_cents;
      continue;
    end if;
    if r.id = p_source_id then v_src := r; v_has_src := true; end if;
    if r.id = p_destination_id or (p_destination_id is null and r.agency = v_agency and r.number = v_number) then
      v_dst := r; v_has_dst := true; v_dst_id := r.id;
    end if;
  end loop;

  if not v_has_src then
    code := 'SOURCE_NOT_FOUND';
  elsif p_mode in ('SUBMIT', 'DEFER') then
    code := case
      when v_src.holder_status in ('BLOCKED', 'CLOSED') then 'HOLDER_BLOCKED'
      when v_src.holder_status <> 'ACTIVE' or v_src.onboarding_step <> 'DONE' then 'ONBOARDING_INCOMPLETE'
      when v_src.status <> 'APPROVED' then 'ACCOUNT_NOT_APPROVED'
    end;
  end if;
  -- A closed account (its holder CLOSED, or the account REJECTED at onboarding) receives nothing, like one that never
  -- existed; a blocked or still onboarding one is a transfer refused with DESTINATION_NOT_ACTIVE.
  if code is null and not v_has_dst then
    code := 'DESTINATION_NOT_FOUND';
  elsif code is null and (v_dst.holder_status = 'CLOSED' or v_dst.status = 'REJECTED') then
    code := 'DESTINATION_NOT_FOUND';
  end if;
  if code is null then
    destination_id := v_dst.id;
    code := case
      when v_dst.id = v_src.id then 'SAME_ACCOUNT'
      when p_mode in ('SUBMIT', 'DEFER') and v_src.approver_holder_id is not null then 'APPROVAL_REQUIRED'
    end;
  end if;
  v_hash := encode(sha256(convert_to(json_build_array(v_dst_id, p_amount::text, p_description, p_external_ref)::text, 'UTF8')), 'hex');

  if code is not null then
    -- A retried request answers as it did, whatever changed since.
    select * into v_tev from tev_transfer t where t.id = p_tev_id;
    if v_tev.id is null then return next; return; end if;
    if v_tev.request_hash <> v_hash then code := 'IDEMPOTENCY_KEY_REUSED'; return next; return; end if;
    return query select * from tev_stored_outcome(v_tev);
    return;
  end if;

  v_fee_out := v_src.fee_out;
  v_fee_in := v_dst.fee_in;
  v_fees := v_fee_out + v_fee_in;
  if v_fees > 0 and v_rev_id is null then raise exception 'tenant % has no fee revenue account', p_tenant_id; end if;
  v_description := coalesce(p_description, 'Transferência para ' || v_dst.name);
  v_reason := case
    when p_mode = 'FAIL' then p_fail_reason
    -- A transfer resolved after its outcome was unknown never skips the account's dual approval: it fails, and
    -- the client sends it again to be held.
    when p_origin <> 'APPROVAL' and v_src.approver_holder_id is not null then 'APPROVAL_REQUIRED'
    when not v_src.may_move then 'SOURCE_NOT_ACTIVE'
    when not v_dst.may_move then 'DESTINATION_NOT_ACTIVE'
    when p_amount > p_max_amount then 'AMOUNT_ABOVE_LIMIT'
    when p_amount <= v_fee_in then 'AMOUNT_BELOW_RECEIVE_FEE'
    when v_src.balance_cents < p_amount + v_fee_out then 'INSUFFICIENT_BALANCE'
  end;

  -- The record, with its outcome unless it is deferred. Two identical requests racing: the second waits for the
  -- first to commit, inserts nothing and reads it.
  insert into tev_transfer as t (id, tenant_id, source_account_id, destination_account_id, amount_cents, fee_out_cents, fee_in_cents,
                                 description, external_ref, end_to_end_id, idempotency_key, request_hash, origin, status, reason,
                                 source_movement_id, destination_movement_id, resolved_at)
  select p_tev_id, p_tenant_id, p_source_id, v_dst.id, p_amount, v_fee_out, v_fee_in, v_description, p_external_ref,
         p_end_to_end_id, p_idempotency_key, v_hash, p_origin, o.status, case when o.status = 'FAILED' then v_reason end,
         case when o.status = 'DONE' then p_ids[1] end, case when o.status = 'DONE' then p_ids[2] end,
         case when o.status <> 'PROCESSING' then now() end
    from (select case when p_mode = 'DEFER' then 'PROCESSING' when v_reason is null then 'DONE' else 'FAILED' end as status) o
  on conflict do nothing
  returning * into v_tev;

  if v_tev.id is null then
    select * into v_tev from tev_transfer t where t.id = p_tev_id;
    -- Not this request's record: the conflict was another transfer's externalRef.
    if v_tev.id is null then code := 'EXTERNAL_REF_TAKEN'; return next; return; end if;
    if v_tev.request_hash <> v_hash then code := 'IDEMPOTENCY_KEY_REUSED'; return next; return; end if;
    if v_tev.status = 'PROCESSING' and p_mode <> 'DEFER' then
      -- Recorded earlier without an outcome (sandbox, or one that was not known in time): settle it now.
      update tev_transfer t set status = case when v_reason is null then 'DONE' else 'FAILED' end, reason = v_reason,
             source_movement_id = case when v_reason is null then p_ids[1] end,
             destination_movement_id = case when v_reason is null then p_ids[2] end, resolved_at = now()
       where t.id = p_tev_id and t.status = 'PROCESSING'
      returning * into v_tev;
      v_settling := found;
    end if;
    if not v_settling then
      select * into v_tev from tev_transfer t where t.id = p_tev_id;
      return query select * from tev_stored_outcome(v_tev);
      return;
    end if;
  elsif p_mode = 'DEFER' then
    if p_handoff is not null then
      insert into workflow_start (key, task_queue, workflow_type, workflow_id, args, search_attributes, reuse_policy)
      values (p_handoff->>'workflowId', p_handoff->>'taskQueue', p_handoff->>'workflowType', p_handoff->>'workflowId',
              p_handoff->'args', p_handoff->'searchAttributes', p_handoff->>'reusePolicy')
      on conflict (key) do nothing;
    end if;
    code := 'PROCESSING';
    return next; return;
  end if;

  v_now := clock_timestamp();
  v_event := jsonb_build_object(
    'tevTransferId', v_tev.id, 'endToEndId', v_tev.end_to_end_id, 'amountCents', p_amount::text,
    'externalRef', v_tev.external_ref, 'description', v_description,
    'payerAccount', v_src.number, 'payerBranch', v_src.agency, 'beneficiaryAccount', v_dst.number, 'beneficiaryBranch', v_dst.agency,
    'occurredAt', to_char(v_now at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'));

  if v_reason is not null then
    insert into event_outbox (id, tenant_id, account_id, pix_account_id, type, data)
    values (gen_random_uuid(), p_tenant_id, v_src.id, v_src.pix_account_id, 'tev.out.failed',
            v_event || jsonb_build_object('movementId', null, 'feeCents', v_fee_out::text, 'reason', v_reason));
    return query select 'FAILED', v_tev.id, 'FAILED', v_reason, p_amount, 0::bigint, v_tev.resolved_at, v_dst.id;
    return;
  end if;

  -- 'date' is when the transfer was submitted; 'paymentDate' when it settled, in America/Sao_Paulo.
  v_local := v_now at time zone 'America/Sao_Paulo';
  v_offset := round(extract(epoch from (v_local - (v_now at time zone 'UTC'))) / 60);
  v_when := jsonb_build_object(
    'date', to_char(v_tev.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
    'endToEndId', v_tev.end_to_end_id,
    'paymentDate', to_char(v_local, 'YYYY-MM-DD HH24:MI:SS') || case when v_offset < 0 then '-' else '+' end
                   || lpad((abs(v_offset) / 60)::text, 2, '0') || ':' || lpad((abs(v_offset) % 60)::text, 2, '0'));

  insert into movement (id, statement_id, tenant_id, account_id, operation_id, source, channel, direction, status, payout_status,
                        status_external, amount_cents, fee_cents, balance_after_cents, description, external_ref, end_to_end_id,
                        reverses_movement_id, metadata, created_at)
  select m.* from (values
    (p_ids[1], gen_random_uuid(), p_tenant_id, v_src.id, v_tev.id, 'TEF_OUT', 'TEF', 'DEBIT', 'DONE', 'POSTED', 'SUCCESS',
     p_amount, v_fee_out, v_src.balance_cents - p_amount - v_fee_out, v_description, v_tev.external_ref, v_tev.end_to_end_id, null::text,
     v_when || jsonb_build_object(
       'payer', jsonb_build_object('branch', v_src.agency, 'account', v_src.number),
       'beneficiary', jsonb_build_object('ispb', '00000000', 'name', v_dst.name, 'branch', v_dst.agency, 'account', v_dst.number,
                                         'document', v_dst.document, 'accountType', 'CACC', 'branchDigit', null, 'accountModel', 'INTERNAL')),
     v_now),
    (p_ids[2], gen_random_uuid(), p_tenant_id, v_dst.id, v_tev.id, 'TEF_IN', 'TEF', 'CREDIT', 'DONE', null, 'SUCCESS',
     p_amount, v_fee_in, v_dst.balance_cents + p_amount - v_fee_in, v_description, v_tev.external_ref, v_tev.end_to_end_id, null,
     v_when || jsonb_build_object(
       'payer', jsonb_build_object('ispb', '00000000', 'name', v_src.name, 'branch', v_src.agency, 'account', v_src.number, 'document', v_src.document),
       'beneficiary', jsonb_build_object('branch', v_dst.agency, 'account', v_dst.number)),
     v_now),
    -- The platform's side of the double entry: both fees of the transfer, in one credit.
    (p_ids[3], gen_random_uuid(), p_tenant_id, case when v_fees > 0 then v_rev_id end, v_tev.id, 'FEE_REVENUE', 'TEF', 'CREDIT', 'DONE', null, 'SUCCESS',
     v_fees, 0, v_rev_balance + v_fees, 'Tarifas TEV ' || v_tev.id, v_tev.external_ref, v_tev.end_to_end_id, null, '{}'::jsonb, v_now)
  ) m where m.column4 is not null;

  insert into ledger_entry (id, movement_id, account_id, line, kind, amount_cents, balance_after_cents, created_at)
  select e.id, e.movement_id, e.account_id, e.line, e.kind, e.amount, e.balance_after, v_now from (values
    (p_ids[4], p_ids[1], v_src.id, 1::smallint, 'PRIMARY', -p_amount, v_src.balance_cents - p_amount),
    (p_ids[6], p_ids[1], v_src.id, 2::smallint, 'FEE', -v_fee_out, v_src.balance_cents - p_amount - v_fee_out),
    (p_ids[5], p_ids[2], v_dst.id, 1::smallint, 'PRIMARY', p_amount, v_dst.balance_cents + p_amount),
    (p_ids[7], p_ids[2], v_dst.id, 2::smallint, 'FEE', -v_fee_in, v_dst.balance_cents + p_amount - v_fee_in),
    (p_ids[8], p_ids[3], v_rev_id, 1::smallint, 'FEE', v_fees, v_rev_balance + v_fees)
  ) e(id, movement_id, account_id, line, kind, amount, balance_after) where e.amount <> 0;

  update account a set balance_cents = b.balance
    from (values (v_src.id, v_src.balance_cents - p_amount - v_fee_out), (v_dst.id, v_dst.balance_cents + p_amount - v_fee_in),
                 (case when v_fees > 0 then v_rev_id end, v_rev_balance + v_fees)) b(id, balance)
   where a.id = b.id;

  insert into event_outbox (id, tenant_id, account_id, pix_account_id, type, data)
  values (gen_random_uuid(), p_tenant_id, v_src.id, v_src.pix_account_id, 'tev.out.succeeded',
          v_event || jsonb_build_object('movementId', p_ids[1], 'feeCents', v_fee_out::text)),
         (gen_random_uuid(), p_tenant_id, v_dst.id, v_dst.pix_account_id, 'tev.in.received',
          v_event || jsonb_build_object('movementId', p_ids[2], 'feeCents', v_fee_in::text));
  return query select 'DONE', v_tev.id, 'DONE', null::text, p_amount, v_fee_out, v_tev.resolved_at, v_dst.id;
end $$;
