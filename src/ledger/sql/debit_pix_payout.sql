create or replace function debit_pix_payout_payer(
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
  p_ids text[],               -- cuid2 ids made by the caller: 3 movements, then 4 entries
  p_handoff jsonb             -- the workflow_start row of the payout's settlement workflow, or null
) returns table (code text, status text, reason text, fee_cents bigint, created_at timestamptz, credit jsonb)
language plpgsql as $$
#variable_conflict use_column
declare
  v_src record;
  v_fee bigint;
  v_reason text;
  v_payout pix_payout;
  v_now timestamptz;
begin
  -- The payer's side of a Pix debit: the payer is locked, checked and debited, the payout and its hand-off recorded.
  -- The tenant's side (settlement and fee revenue accounts) is `credit`, for `post_tenant_credits` to post last.
  select a.id, a.balance_cents, a.agency, a.number, a.pix_account_id,
         coalesce(account_may_move_money(a.status, h.status, h.onboarding_step), false) as may_move,
         case when p_channel = 'QR_CODE_OUT' then coalesce(own.qr_out_cents, ten.qr_out_cents, 0)
              else coalesce(own.pix_out_cents, ten.pix_out_cents, 0) end as fee
    into v_src
    from account a
    left join holder h on h.id = a.holder_id
    left join fee_schedule own on own.account_id = a.id
    left join fee_schedule ten on ten.tenant_id = a.tenant_id and ten.account_id is null
   where a.tenant_id = p_tenant_id and a.kind = 'HOLDER' and a.id = p_account_id
     for no key update of a;
  if v_src.id is null then code := 'SOURCE_NOT_FOUND'; return next; return; end if;

  -- The same request again (its id comes from the account and the Idempotency-Key) waited for the first one's lock
  -- on the payer above, and answers as the first one did.
  select * into v_payout from pix_payout p where p.id = p_payout_id;
  if v_payout.id is not null then
    if v_payout.request_hash <> p_request_hash then code := 'IDEMPOTENCY_KEY_REUSED'; return next; return; end if;
    -- Recorded by a version that debited in the workflow, and not debited yet: its workflow debits it.
    return query select case when v_payout.status = 'REQUESTED' then 'PENDING' else 'RECORDED' end,
                        v_payout.status, v_payout.reason, v_payout.fee_cents, v_payout.created_at, null::jsonb;
    return;
  end if;

  v_fee := v_src.fee;
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
    return query select 'REJECTED', v_payout.status, v_reason, v_fee, v_payout.created_at, null::jsonb;
    return;
  end if;

  v_now := clock_timestamp();
  insert into movement (id, statement_id, tenant_id, account_id, operation_id, source, channel, direction, status, payout_status,
                        status_external, amount_cents, fee_cents, balance_after_cents, description, external_ref, end_to_end_id,
                        reverses_movement_id, metadata, created_at)
  values (p_ids[1], gen_random_uuid(), p_tenant_id, v_src.id, p_payout_id, p_channel, 'PIX', 'DEBIT', 'PENDING', 'PROCESSING', 'PROCESSING',
          p_amount, v_fee, v_src.balance_cents - p_amount - v_fee, p_description, null, null, null,
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
          v_now);

  insert into ledger_entry (id, movement_id, account_id, line, kind, amount_cents, balance_after_cents, created_at)
  select e.id, p_ids[1], v_src.id, e.line, e.kind, e.amount, e.balance_after, v_now from (values
    (p_ids[4], 1::smallint, 'PRIMARY', -p_amount, v_src.balance_cents - p_amount),
    (p_ids[5], 2::smallint, 'FEE', -v_fee, v_src.balance_cents - p_amount - v_fee)
  ) e(id, line, kind, amount, balance_after) where e.amount <> 0;

  update account a set balance_cents = v_src.balance_cents - p_amount - v_fee where a.id = v_src.id;

  -- The payout references its debit, so it comes after the movement.
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

  return query select 'PROCESSING', v_payout.status, null::text, v_fee, v_payout.created_at,
                      jsonb_build_object('payout_id', p_payout_id, 'tenant_id', p_tenant_id, 'amount', p_amount, 'fee', v_fee,
                                         'ids', jsonb_build_array(p_ids[2], p_ids[3], p_ids[6], p_ids[7]));
end $$;

create or replace function debit_pix_payout(
  p_payout_id text, p_tenant_id uuid, p_account_id uuid, p_channel text, p_amount bigint, p_pix_key text, p_pix_key_type text,
  p_beneficiary jsonb, p_qr jsonb, p_description text, p_idempotency_key text, p_request_hash text, p_ids text[], p_handoff jsonb
) returns table (code text, status text, reason text, fee_cents bigint, created_at timestamptz)
language plpgsql as $$
#variable_conflict use_column
declare
  r record;
begin
  -- One Pix debit in one transaction: the payer's side, then the tenant's (see debit_pix_payout_payer).
  select * into r from debit_pix_payout_payer(p_payout_id, p_tenant_id, p_account_id, p_channel, p_amount, p_pix_key, p_pix_key_type,
                                              p_beneficiary, p_qr, p_description, p_idempotency_key, p_request_hash, p_ids, p_handoff);
  if r.credit is not null then perform post_tenant_credits(jsonb_build_array(r.credit)); end if;
  return query select r.code, r.status, r.reason, r.fee_cents, r.created_at;
end $$;
