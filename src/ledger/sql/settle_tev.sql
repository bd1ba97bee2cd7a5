-- Its earlier version hashed the request itself (the hash now comes from requestHash, src/shared/idempotency.ts).
drop function if exists settle_tev(text, text, uuid, uuid, uuid, text, text, bigint, text, text, text, text, text, bigint, text[], jsonb, text);
-- Its version before the fees could be given (p_fees), by settle_tev_batch, which reads them for its locks.
drop function if exists settle_tev(text, text, uuid, uuid, uuid, text, text, bigint, text, text, text, text, text, text, bigint, text[], jsonb, text);

-- A TEV's rules, shared by settle_tev (one transfer, any mode) and settle_tev_batch (requests settled together): each
-- is written once here, and both apply it to the accounts they locked. Small `language sql` functions, inlined where
-- they are called.

-- Why a request cannot become a transfer as asked (`refusal`, null when it can): the source missing or (at request
-- time) unable to operate, the destination missing or closed (its holder CLOSED, or the account REJECTED at
-- onboarding: it receives nothing, like one that never existed), the same account on both sides, and, at request time,
-- an account under dual approval (a batch's item was held for the approver with its batch, as a whole, when it was
-- received). `destination_id`: the destination, when it was found open (the approver's request names it).
-- An account not found is given as nulls.
create or replace function tev_refusal(p_mode text, p_origin text, p_source_id uuid, p_source_refusal text,
                                       p_source_approver uuid, p_destination_id uuid, p_destination_status text,
                                       p_destination_holder_status text)
returns table (refusal text, destination_id uuid)
language sql immutable parallel safe as $$
  select c.refusal, case when c.refusal is null or c.refusal in ('SAME_ACCOUNT', 'APPROVAL_REQUIRED') then p_destination_id end
    from (select case
      when p_source_id is null then 'SOURCE_NOT_FOUND'
      when p_mode in ('SUBMIT', 'DEFER') and p_source_refusal is not null then p_source_refusal
      when p_destination_id is null then 'DESTINATION_NOT_FOUND'
      when p_destination_holder_status = 'CLOSED' or p_destination_status = 'REJECTED' then 'DESTINATION_NOT_FOUND'
      when p_destination_id = p_source_id then 'SAME_ACCOUNT'
      when p_mode in ('SUBMIT', 'DEFER') and p_origin <> 'BATCH' and p_source_approver is not null then 'APPROVAL_REQUIRED'
    end as refusal) c
$$;

-- Why a transfer that is recorded fails, or null when it settles (limits aside, checked last by the caller):
-- `p_balance` is the source's balance as the transfer finds it. A transfer resolved after its outcome was unknown never
-- skips the account's dual approval: it fails, and the client sends it again to be held.
create or replace function tev_failure(p_mode text, p_fail_reason text, p_origin text, p_source_approver uuid,
                                       p_source_may_move boolean, p_destination_may_move boolean, p_amount bigint,
                                       p_max_amount bigint, p_fee_out bigint, p_fee_in bigint, p_balance bigint) returns text
language sql immutable parallel safe as $$
  select case
    when p_mode = 'FAIL' then p_fail_reason
    when p_origin not in ('APPROVAL', 'BATCH') and p_source_approver is not null then 'APPROVAL_REQUIRED'
    when not p_source_may_move then 'SOURCE_NOT_ACTIVE'
    when not p_destination_may_move then 'DESTINATION_NOT_ACTIVE'
    when p_amount > p_max_amount then 'AMOUNT_ABOVE_LIMIT'
    when p_amount <= p_fee_in then 'AMOUNT_BELOW_RECEIVE_FEE'
    when p_balance < p_amount + p_fee_out then 'INSUFFICIENT_BALANCE'
  end
$$;

-- A settled transfer's postings, at `p_at`: the source pays the amount and its fee, the destination receives the
-- amount less its fee, the tenant's fee revenue account both fees (the platform's side of the double entry, one
-- credit). `p_ids`: 3 movements, then 5 entries. 'date' is when the transfer was submitted (`p_submitted_at`);
-- 'paymentDate' when it settled, in America/Sao_Paulo.
create or replace function tev_movements(
  p_ids text[], p_tev_id text, p_external_ref text, p_end_to_end_id text, p_submitted_at timestamptz, p_at timestamptz,
  p_amount bigint, p_fee_out bigint, p_fee_in bigint, p_description text,
  p_source_id uuid, p_source_agency text, p_source_number text, p_source_name text, p_source_document text,
  p_destination_id uuid, p_destination_agency text, p_destination_number text, p_destination_name text,
  p_destination_document text, p_fee_revenue_id uuid
) returns posting_movement[]
language sql stable parallel safe as $$
  select array[
    posting_movement_of(
      id => p_ids[1], account_id => p_source_id, operation_id => p_tev_id, source => 'TEF_OUT', channel => 'TEF', direction => 'DEBIT',
      payout_status => 'POSTED', amount => p_amount, fee => p_fee_out, description => p_description,
      external_ref => p_external_ref, end_to_end_id => p_end_to_end_id, at => p_at,
      metadata => jsonb_build_object('date', iso_utc(p_submitted_at), 'endToEndId', p_end_to_end_id,
                                     'paymentDate', sao_paulo_payment_date(p_at),
        'payer', jsonb_build_object('branch', p_source_agency, 'account', p_source_number),
        'beneficiary', tev_beneficiary(p_destination_name, p_destination_agency, p_destination_number, p_destination_document)),
      lines => array[posting_line_of(p_ids[4], 'PRIMARY', -p_amount), posting_line_of(p_ids[6], 'FEE', -p_fee_out)]),
    posting_movement_of(
      id => p_ids[2], account_id => p_destination_id, operation_id => p_tev_id, source => 'TEF_IN', channel => 'TEF', direction => 'CREDIT',
      amount => p_amount, fee => p_fee_in, description => p_description,
      external_ref => p_external_ref, end_to_end_id => p_end_to_end_id, at => p_at,
      metadata => jsonb_build_object('date', iso_utc(p_submitted_at), 'endToEndId', p_end_to_end_id,
                                     'paymentDate', sao_paulo_payment_date(p_at),
        'payer', jsonb_build_object('ispb', platform_ispb(), 'name', p_source_name, 'branch', p_source_agency,
                                    'account', p_source_number, 'document', p_source_document),
        'beneficiary', jsonb_build_object('branch', p_destination_agency, 'account', p_destination_number)),
      lines => array[posting_line_of(p_ids[5], 'PRIMARY', p_amount), posting_line_of(p_ids[7], 'FEE', -p_fee_in)]),
    posting_movement_of(
      id => p_ids[3], account_id => p_fee_revenue_id, operation_id => p_tev_id, source => 'FEE_REVENUE', channel => 'TEF',
      direction => 'CREDIT', amount => p_fee_out + p_fee_in, description => 'Tarifas TEV ' || p_tev_id,
      external_ref => p_external_ref, end_to_end_id => p_end_to_end_id, at => p_at,
      lines => array[posting_line_of(p_ids[8], 'FEE', p_fee_out + p_fee_in)])]
$$;

-- A recorded transfer's events, at `p_at`: tev.out.failed to the source when it failed (`p_reason`), else
-- tev.out.succeeded to the source and tev.in.received to the destination, naming their movements (`p_ids`, as
-- tev_movements takes them). Their data is defined in src/events/catalog.ts; test/domain/events.test.ts parses what is
-- written here with it.
create or replace function tev_events(
  p_reason text, p_ids text[], p_tev_id text, p_external_ref text, p_end_to_end_id text, p_at timestamptz, p_amount bigint,
  p_fee_out bigint, p_fee_in bigint, p_description text,
  p_source_id uuid, p_source_pix_account_id text, p_source_agency text, p_source_number text,
  p_destination_id uuid, p_destination_pix_account_id text, p_destination_agency text, p_destination_number text
) returns table (account_id uuid, pix_account_id text, type text, data jsonb)
language sql stable parallel safe as $$
  select e.account_id, e.pix_account_id, e.type,
         jsonb_build_object(
           'tevTransferId', p_tev_id, 'endToEndId', p_end_to_end_id, 'amountCents', p_amount::text, 'externalRef', p_external_ref,
           'description', p_description, 'payerAccount', p_source_number, 'payerBranch', p_source_agency,
           'beneficiaryAccount', p_destination_number, 'beneficiaryBranch', p_destination_agency, 'occurredAt', iso_utc(p_at))
         || e.data
    from (values
      (p_source_id, p_source_pix_account_id, case when p_reason is null then 'tev.out.succeeded' else 'tev.out.failed' end,
       case when p_reason is null then jsonb_build_object('movementId', p_ids[1], 'feeCents', p_fee_out::text)
            else jsonb_build_object('movementId', null, 'feeCents', p_fee_out::text, 'reason', p_reason) end),
      (p_destination_id, p_destination_pix_account_id, 'tev.in.received',
       jsonb_build_object('movementId', p_ids[2], 'feeCents', p_fee_in::text))
    ) e(account_id, pix_account_id, type, data)
   where p_reason is null or e.type <> 'tev.in.received'
$$;

-- Writes events to the outbox, column by column: a batch's, all in one statement.
create or replace function record_events(p_tenant_ids uuid[], p_account_ids uuid[], p_pix_account_ids text[], p_types text[],
                                         p_data jsonb[]) returns void
language plpgsql as $$
begin
  insert into event_outbox (id, tenant_id, account_id, pix_account_id, type, data)
  select gen_random_uuid(), e.* from unnest(p_tenant_ids, p_account_ids, p_pix_account_ids, p_types, p_data) e;
end $$;

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
  p_request_hash text,        -- what the request asks for (requestHash): the same key with another request is refused
  p_origin text,
  p_max_amount bigint,
  p_ids text[],               -- cuid2 ids made by the caller: 3 movements, then 5 entries
  p_handoff jsonb,            -- DEFER: the workflow_start row that hands the transfer to its workflow
  p_fail_reason text,
  p_fees bigint[] default null -- the fees in force, {tev_out of the source, tev_in of the destination}, when the caller
                               -- read them before its locks (settle_tev_batch); null: read here
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
  v_named_id uuid;
  v_rev_id uuid;
  v_settling boolean := false;
  v_tev tev_transfer;
  v_fee_out bigint;
  v_fee_in bigint;
  v_fees bigint;
  v_reason text;
  v_description text;
  v_now timestamptz;
  -- The limits: the one a debit breaks, else the periods it is counted in (check_and_count_limits).
  v_limit_refusal jsonb;
  v_period text;
  v_period_of date;
  v_month_of date;
begin
  -- A mode this function does not know would skip the request-time checks like RESOLVE: refused instead (an api
  -- older than the rename of HOLD to DEFER, say, while it still runs beside the new function).
  if p_mode not in ('SUBMIT', 'DEFER', 'RESOLVE', 'FAIL') then
    raise exception 'settle_tev: unknown mode %', p_mode;
  end if;
  tev_id := p_tev_id;
  -- The destination by id, or by branch and number; the fees in force, read before the locks so that the fee revenue
  -- account is locked only when a fee applies.
  -- The destination in an assignment of its own: inside the fees' query PostgreSQL copied the lookup into each place
  -- that reads it, and ran it twice.
  v_named_id := coalesce(p_destination_id, holder_account_by_number(p_tenant_id, p_destination_branch, p_destination_account));
  if p_fees is null then
    select fo.tev_out, fi.tev_in into v_fee_out, v_fee_in
      from fee_schedule_of(p_source_id, p_tenant_id) fo
      cross join fee_schedule_of(v_named_id, p_tenant_id) fi;
  else
    v_fee_out := p_fees[1];
    v_fee_in := p_fees[2];
  end if;
  v_fees := v_fee_out + v_fee_in;
  -- Holders by id, then the tenant's fee revenue account: transfers touching the same accounts in any direction
  -- queue instead of deadlocking.
  for r in select * from lock_accounts(p_tenant_id, array[p_source_id, v_named_id],
                                       case when v_fees > 0 then '{FEE_REVENUE}'::text[] else '{}'::text[] end) loop
    if r.kind = 'FEE_REVENUE' then v_rev_id := r.id; continue; end if;
    if r.id = p_source_id then v_src := r; v_has_src := true; end if;
    if r.id = v_named_id then v_dst := r; v_has_dst := true; end if;
  end loop;

  -- An account not found reads as nulls, as the batch's outer join reads it.
  if not v_has_src then select * into v_src from lock_accounts(p_tenant_id, '{}', '{}'); end if;
  if not v_has_dst then select * into v_dst from lock_accounts(p_tenant_id, '{}', '{}'); end if;
  select * into code, destination_id
    from tev_refusal(p_mode, p_origin, v_src.id, v_src.refusal, v_src.approver_holder_id, v_dst.id, v_dst.status, v_dst.holder_status);

  if code is not null then
    -- A retried request answers as it did, whatever changed since.
    select * into v_tev from tev_transfer t where t.id = p_tev_id;
    if v_tev.id is null then return next; return; end if;
    if v_tev.request_hash <> p_request_hash then code := 'IDEMPOTENCY_KEY_REUSED'; return next; return; end if;
    return query select * from tev_stored_outcome(v_tev);
    return;
  end if;

  if v_fees > 0 and v_rev_id is null then raise exception 'tenant % has no fee revenue account', p_tenant_id; end if;
  v_description := tev_description(p_description, v_dst.holder_name);
  v_reason := tev_failure(p_mode, p_fail_reason, p_origin, v_src.approver_holder_id, v_src.may_move, v_dst.may_move,
                          p_amount, p_max_amount, v_fee_out, v_fee_in, v_src.balance_cents);
  -- The source's limits last, for a transfer that would settle now, counted at once; given back below when it does
  -- not settle after all (a retry that finds its record settled counts nothing).
  if v_reason is null and p_mode <> 'DEFER' then
    select * into v_limit_refusal, v_period, v_period_of, v_month_of
      from check_and_count_limits(p_tenant_id, v_src.id, v_src.holder_type, 'TEV', p_amount, null, v_dst.agency, v_dst.number);
    if v_limit_refusal is not null then v_reason := 'LIMIT_EXCEEDED'; end if;
  end if;

  -- The record, with its outcome unless it is deferred. Two identical requests racing: the second waits for the
  -- first to commit, inserts nothing and reads it.
  insert into tev_transfer as t (id, tenant_id, source_account_id, destination_account_id, amount_cents, fee_out_cents, fee_in_cents,
                                 description, external_ref, end_to_end_id, idempotency_key, request_hash, origin, status, reason,
                                 source_movement_id, destination_movement_id, resolved_at)
  select p_tev_id, p_tenant_id, p_source_id, v_dst.id, p_amount, v_fee_out, v_fee_in, v_description, p_external_ref,
         p_end_to_end_id, p_idempotency_key, p_request_hash, p_origin, o.status, case when o.status = 'FAILED' then v_reason end,
         case when o.status = 'DONE' then p_ids[1] end, case when o.status = 'DONE' then p_ids[2] end,
         case when o.status <> 'PROCESSING' then now() end
    from (select case when p_mode = 'DEFER' then 'PROCESSING' when v_reason is null then 'DONE' else 'FAILED' end as status) o
  on conflict do nothing
  returning * into v_tev;

  if v_tev.id is null then
    select * into v_tev from tev_transfer t where t.id = p_tev_id;
    -- Counted in its limits above, and settled only if it is this request's record, still PROCESSING: else given back.
    if v_reason is null and v_month_of is not null
       and not (v_tev.id is not null and v_tev.request_hash = p_request_hash and v_tev.status = 'PROCESSING' and p_mode <> 'DEFER') then
      perform give_back_limits(v_src.id, 'TEV', p_amount, v_period, v_period_of, v_month_of);
    end if;
    -- Not this request's record: the conflict was another transfer's externalRef.
    if v_tev.id is null then code := 'EXTERNAL_REF_TAKEN'; return next; return; end if;
    if v_tev.request_hash <> p_request_hash then code := 'IDEMPOTENCY_KEY_REUSED'; return next; return; end if;
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
    if p_handoff is not null then perform record_workflow_starts(jsonb_build_array(p_handoff), false); end if;
    code := 'PROCESSING';
    return next; return;
  end if;

  v_now := clock_timestamp();
  insert into event_outbox (id, tenant_id, account_id, pix_account_id, type, data)
  select gen_random_uuid(), p_tenant_id, e.*
    from tev_events(v_reason, p_ids, v_tev.id, v_tev.external_ref, v_tev.end_to_end_id, v_now, p_amount, v_fee_out, v_fee_in,
                    v_description, v_src.id, v_src.pix_account_id, v_src.agency, v_src.number,
                    v_dst.id, v_dst.pix_account_id, v_dst.agency, v_dst.number) e;
  if v_reason is not null then
    return query select 'FAILED', v_tev.id, 'FAILED', v_reason, p_amount, 0::bigint, v_tev.resolved_at, v_dst.id;
    return;
  end if;

  perform post_movements(p_tenant_id, v_now, tev_movements(
    p_ids, v_tev.id, v_tev.external_ref, v_tev.end_to_end_id, v_tev.created_at, v_now, p_amount, v_fee_out, v_fee_in, v_description,
    v_src.id, v_src.agency, v_src.number, v_src.holder_name, v_src.holder_document,
    v_dst.id, v_dst.agency, v_dst.number, v_dst.holder_name, v_dst.holder_document, v_rev_id));
  return query select 'DONE', v_tev.id, 'DONE', null::text, p_amount, v_fee_out, v_tev.resolved_at, v_dst.id;
end $$;
