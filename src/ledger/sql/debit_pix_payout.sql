create or replace function debit_pix_payout(
  p_payout_id text,
  p_tenant_id uuid,
  p_account_id uuid,
  p_channel text,             -- PIX_OUT (by key) | QR_CODE_OUT
  p_amount bigint,
  p_pix_key text,
  p_pix_key_type text,
  p_beneficiary jsonb,        -- as stored on the payout (document as the payer may see it)
  p_qr jsonb,
  p_description text,
  p_idempotency_key text,
  p_request_hash text,
  p_ids text[],               -- cuid2 ids made by the caller: 3 movements, then 3 entries
  p_handoff jsonb             -- the workflow_start row of the payout's settlement workflow, or null
) returns table (code text, status text, reason text, fee_cents bigint, created_at timestamptz)
language plpgsql as $$
#variable_conflict use_column
declare
  r record;
  v_src record;
  v_has_src boolean := false;
  v_settlement_id uuid;
  v_settlement_balance bigint;
  v_rev_id uuid;
  v_rev_balance bigint;
  v_fee bigint;
  v_reason text;
  v_payout pix_payout;
  v_now timestamptz;
begin
  -- One statement finds and locks, in id order, the payer, the tenant's settlement account (the provider's side of
  -- every Pix) and, when the payer's Pix fee is not zero, the fee revenue account; the payer's fee comes with it.
  for r in
    select a.id, a.kind, a.balance_cents, a.agency, a.number, a.pix_account_id,
           coalesce(account_may_move_money(a.status, h.status, h.onboarding_step), false) as may_move,
           case when p_channel = 'QR_CODE_OUT' then coalesce(own.qr_out_cents, ten.qr_out_cents, 0)
                else coalesce(own.pix_out_cents, ten.pix_out_cents, 0) end as fee
      from account a
      left join holder h on h.id = a.holder_id
      left join fee_schedule own on own.account_id = a.id
      left join fee_schedule ten on ten.tenant_id = a.tenant_id and ten.account_id is null
     where a.tenant_id = p_tenant_id
       and ((a.kind = 'HOLDER' and a.id = p_account_id)
            or a.kind = 'SETTLEMENT'
            or (a.kind = 'FEE_REVENUE' and exists (
                  select 1 from fee_schedule f
                   where f.tenant_id = p_tenant_id and (f.account_id is null or f.account_id = p_account_id)
                     and (case when p_channel = 'QR_CODE_OUT' then f.qr_out_cents else f.pix_out_cents end) > 0)))
     order by a.id
       for no key update of a
  loop
    if r.kind = 'SETTLEMENT' then v_settlement_id := r.id; v_settlement_balance := r.balance_cents;
    elsif r.kind = 'FEE_REVENUE' then v_rev_id := r.id; v_rev_balance := r.balance_cents;
    else v_src := r; v_has_src := true;
    end if;
  end loop;
  if not v_has_src then code := 'SOURCE_NOT_FOUND'; return next; return; end if;
  if v_settlement_id is null then raise exception 'tenant % has no settlement account', p_tenant_id; end if;

  -- The same request again (its id comes from the account and the Idempotency-Key) waited for the first one's lock
  -- on the payer above, and answers as the first one did.
  select * into v_payout from pix_payout p where p.id = p_payout_id;
  if v_payout.id is not null then
    if v_payout.request_hash <> p_request_hash then code := 'IDEMPOTENCY_KEY_REUSED'; return next; return; end if;
    -- Recorded by a version that debited in the workflow, and not debited yet: its workflow debits it.
    return query select case when v_payout.status = 'REQUESTED' then 'PENDING' else 'RECORDED' end,
                        v_payout.status, v_payout.reason, v_payout.fee_cents, v_payout.created_at;
    return;
  end if;

  v_fee := v_src.fee;
  if v_fee > 0 and v_rev_id is null then raise exception 'tenant % has no fee revenue account', p_tenant_id; end if;
  v_reason := case
    when not v_src.may_move then 'SOURCE_NOT_ACTIVE'
    when v_src.balance_cents < p_amount + v_fee then 'INSUFFICIENT_BALANCE'
  end;
  if v_reason is not null then
    insert into pix_payout (id, tenant_id, account_id, channel, amount_cents, fee_cents, pix_key, pix_key_type, beneficiary, qr,
                            description, idempotency_key, request_hash, status, reason)
    values (p_payout_id, p_tenant_id, p_account_id, p_channel, p_amount, v_fee, p_pix_key, p_pix_key_type, p_beneficiary, p_qr,
            p_description, p_idempotency_key, p_request_hash, 'REJECTED', v_reason)
    returning * into v_payout;
    return query select 'REJECTED', v_payout.status, v_reason, v_fee, v_payout.created_at;
    return;
  end if;

  v_now := clock_timestamp();
  insert into movement (id, statement_id, tenant_id, account_id, operation_id, source, channel, direction, status, payout_status,
                        status_external, amount_cents, fee_cents, balance_after_cents, description, external_ref, end_to_end_id,
                        reverses_movement_id, metadata, created_at)
  select m.* from (values
    (p_ids[1], gen_random_uuid(), p_tenant_id, v_src.id, p_payout_id, p_channel, 'PIX', 'DEBIT', 'PENDING', 'PROCESSING', 'PROCESSING',
     p_amount, v_fee, v_src.balance_cents - p_amount - v_fee, p_description, null::text, null::text, null::text,
     jsonb_build_object(
       'date', to_char(v_now at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
       'endToEndId', null,
       'payer', jsonb_build_object('branch', v_src.agency, 'account', v_src.number),
       'beneficiary', jsonb_build_object(
         'ispb', p_beneficiary->'ispb', 'name', p_beneficiary->'name', 'branch', p_beneficiary->'branch',
         'account', p_beneficiary->'account', 'document', p_beneficiary->'document', 'pixKey', p_pix_key,
         'pixKeyType', p_pix_key_type, 'institution', p_beneficiary->'institution', 'accountType', p_beneficiary->'accountType',
         'branchDigit', null, 'accountModel', 'PIX'),
       'pixAccountId', v_src.pix_account_id),
     v_now),
    (p_ids[2], gen_random_uuid(), p_tenant_id, v_settlement_id, p_payout_id, 'SETTLEMENT', 'PIX', 'CREDIT', 'PENDING', null, 'PROCESSING',
     p_amount, 0, v_settlement_balance + p_amount, 'Pix out ' || p_payout_id, null, null, null, '{}'::jsonb, v_now),
    (p_ids[3], gen_random_uuid(), p_tenant_id, case when v_fee > 0 then v_rev_id end, p_payout_id, 'FEE_REVENUE', 'PIX', 'CREDIT', 'DONE', null, 'SUCCESS',
     v_fee, 0, v_rev_balance + v_fee, 'Tarifa Pix ' || p_payout_id, null, null, null, '{}'::jsonb, v_now)
  ) m where m.column4 is not null;

  insert into ledger_entry (id, movement_id, account_id, line, kind, amount_cents, balance_after_cents, created_at)
  select e.id, e.movement_id, e.account_id, e.line, e.kind, e.amount, e.balance_after, v_now from (values
    (p_ids[4], p_ids[1], v_src.id, 1::smallint, 'PRIMARY', -p_amount, v_src.balance_cents - p_amount),
    (p_ids[5], p_ids[1], v_src.id, 2::smallint, 'FEE', -v_fee, v_src.balance_cents - p_amount - v_fee),
    (p_ids[6], p_ids[2], v_settlement_id, 1::smallint, 'PRIMARY', p_amount, v_settlement_balance + p_amount),
    (p_ids[7], p_ids[3], v_rev_id, 1::smallint, 'FEE', v_fee, v_rev_balance + v_fee)
  ) e(id, movement_id, account_id, line, kind, amount, balance_after) where e.amount <> 0;

  update account a set balance_cents = b.balance
    from (values (v_src.id, v_src.balance_cents - p_amount - v_fee), (v_settlement_id, v_settlement_balance + p_amount),
                 (case when v_fee > 0 then v_rev_id end, v_rev_balance + v_fee)) b(id, balance)
   where a.id = b.id;

  -- The payout references its debit, so it comes after the movements.
  insert into pix_payout (id, tenant_id, account_id, channel, amount_cents, fee_cents, pix_key, pix_key_type, beneficiary, qr,
                          description, idempotency_key, request_hash, status, movement_id)
  values (p_payout_id, p_tenant_id, p_account_id, p_channel, p_amount, v_fee, p_pix_key, p_pix_key_type, p_beneficiary, p_qr,
          p_description, p_idempotency_key, p_request_hash, 'PROCESSING', p_ids[1])
  returning * into v_payout;

  -- The settlement workflow's hand-off, due at once: no request waits for Temporal, the reconciler starts it.
  if p_handoff is not null then
    insert into workflow_start (key, task_queue, workflow_type, workflow_id, args, search_attributes, reuse_policy, next_attempt_at)
    values (p_handoff->>'workflowId', p_handoff->>'taskQueue', p_handoff->>'workflowType', p_handoff->>'workflowId',
            p_handoff->'args', p_handoff->'searchAttributes', p_handoff->>'reusePolicy', now())
    on conflict (key) do nothing;
  end if;

  return query select 'PROCESSING', v_payout.status, null::text, v_fee, v_payout.created_at;
end $$;
