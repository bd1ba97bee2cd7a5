-- The payer's side of one Pix debit, decided: the payer is read (the caller locked it), checked, and either held for
-- its approver (APPROVAL_REQUIRED, nothing written), refused (the payout recorded REJECTED) or accepted, answered as
-- `debit`: the payer's movement and what the tenant's side needs, for `post_pix_debits` to post and the caller to
-- record the payout after its movement.
drop function if exists debit_pix_payout_payer(text, uuid, uuid, text, bigint, text, text, jsonb, jsonb, text, text, text, text[], jsonb);
-- Its answer gained `details` (a limit's refusal): a return type changes only by dropping the function. Both it and
-- debit_pix_payout then gained p_approval, when dual approval came to be decided here: the versions before go.
drop function if exists debit_pix_payout_payer(text, uuid, uuid, text, bigint, text, text, jsonb, jsonb, text, text, text, text[], bigint);
drop function if exists debit_pix_payout(text, uuid, uuid, text, bigint, text, text, jsonb, jsonb, text, text, text, text[], jsonb);
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
  p_debited bigint,           -- what debits accepted earlier in the same transaction take from this payer, not posted yet
  p_approval text             -- ASK | REFUSE | GRANTED: what an account under dual approval gets (below)
) returns table (code text, status text, reason text, fee_cents bigint, created_at timestamptz, details jsonb, debit jsonb)
language plpgsql as $$
#variable_conflict use_column
declare
  v_src record;
  v_fee bigint;
  v_reason text;
  v_payout pix_payout;
  -- The limits: the one a debit breaks, else the periods it is counted in (check_and_count_limits).
  v_limit_refusal jsonb;
  v_period text;
  v_period_of date;
  v_month_of date;
  v_now timestamptz;
begin
  select a.id, a.balance_cents, a.agency, a.number, a.pix_account_id, a.approver_holder_id, h.type as holder_type,
         account_may_move_money(a.status, h.status, h.onboarding_step) as may_move,
         case when p_channel = 'QR_CODE_OUT' then f.qr_out else f.pix_out end as fee
    into v_src
    from account a
    left join holder h on h.id = a.holder_id
    cross join fee_schedule_of(a.id, a.tenant_id) f
   where a.tenant_id = p_tenant_id and a.kind = 'HOLDER' and a.id = p_account_id;
  if v_src.id is null then code := 'SOURCE_NOT_FOUND'; return next; return; end if;

  -- The same request again (its id comes from the account and the Idempotency-Key) waited for the first one's lock
  -- on the payer, and answers as the first one did.
  select * into v_payout from pix_payout p where p.id = p_payout_id;
  if v_payout.id is not null then
    if v_payout.request_hash <> p_request_hash then code := 'IDEMPOTENCY_KEY_REUSED'; return next; return; end if;
    -- Recorded by a version that debited in the workflow, and not debited yet: its workflow debits it.
    return query select case when v_payout.status = 'REQUESTED' then 'PENDING' else 'RECORDED' end,
                        v_payout.status, v_payout.reason, v_payout.fee_cents, v_payout.created_at, v_payout.refusal_details, null::jsonb;
    return;
  end if;

  -- Dual approval, decided on the locked row as settle_tev decides a TEV's, so no payment of an account under it
  -- slips through however stale the caller's view of the account: ASK (a request) answers APPROVAL_REQUIRED with
  -- nothing written, and the caller holds the payment for the approver; REFUSE (a request whose answer was lost,
  -- resolved later) records it REJECTED, and the client sends it again to have it held; GRANTED (the approver approved
  -- it, or its batch as a whole) debits it. Anything but GRANTED is at least asked.
  if v_src.approver_holder_id is not null and p_approval is distinct from 'GRANTED' then
    if p_approval is distinct from 'REFUSE' then code := 'APPROVAL_REQUIRED'; return next; return; end if;
    v_reason := 'APPROVAL_REQUIRED';
  end if;

  v_fee := v_src.fee;
  v_reason := case
    when v_reason is not null then v_reason
    when not v_src.may_move then 'SOURCE_NOT_ACTIVE'
    when v_src.balance_cents - p_debited < p_amount + v_fee then 'INSUFFICIENT_BALANCE'
  end;
  -- The payer's Pix limits last, counted at once: a later debit of the same payer in this batch sees this one.
  if v_reason is null then
    select * into v_limit_refusal, v_period, v_period_of, v_month_of
      from check_and_count_limits(p_tenant_id, p_account_id, v_src.holder_type, 'PIX', p_amount, p_pix_key, null, null);
    if v_limit_refusal is not null then v_reason := 'LIMIT_EXCEEDED'; end if;
  end if;
  if v_reason is not null then
    insert into pix_payout (id, tenant_id, account_id, channel, amount_cents, fee_cents, pix_key, pix_key_type, beneficiary, qr,
                            description, idempotency_key, request_hash, status, reason, refusal_details)
    values (p_payout_id, p_tenant_id, p_account_id, p_channel, p_amount, v_fee, p_pix_key, p_pix_key_type, p_beneficiary, p_qr,
            p_description, p_idempotency_key, p_request_hash, 'REJECTED', v_reason,
            case when v_reason = 'LIMIT_EXCEEDED' then v_limit_refusal end)
    returning * into v_payout;
    return query select 'REJECTED', v_payout.status, v_reason, v_fee, v_payout.created_at, v_payout.refusal_details, null::jsonb;
    return;
  end if;

  -- Accepted: the payout is PROCESSING from the transaction's start (its created_at), its debit timed now.
  v_now := clock_timestamp();
  return query select 'PROCESSING', 'PROCESSING', null::text, v_fee, now(), null::jsonb, jsonb_build_object(
    'payout_id', p_payout_id, 'tenant_id', p_tenant_id, 'account_id', p_account_id, 'channel', p_channel, 'amount', p_amount,
    'fee', v_fee, 'pix_key', p_pix_key, 'pix_key_type', p_pix_key_type, 'beneficiary', p_beneficiary, 'qr', p_qr,
    'description', p_description, 'idempotency_key', p_idempotency_key, 'request_hash', p_request_hash, 'ids', to_jsonb(p_ids),
    'limit_period', v_period, 'limit_period_of', v_period_of, 'limit_month_of', v_month_of,
    'movement', jsonb_build_object(
      'id', p_ids[1], 'account_id', v_src.id, 'operation_id', p_payout_id, 'source', p_channel, 'channel', 'PIX', 'direction', 'DEBIT',
      'status', 'PENDING', 'payout_status', 'PROCESSING', 'status_external', 'PROCESSING', 'amount', p_amount, 'fee', v_fee,
      'description', p_description, 'at', v_now,
      'metadata', jsonb_build_object(
        'date', iso_utc(v_now),
        'endToEndId', null,
        'payer', jsonb_build_object('branch', v_src.agency, 'account', v_src.number),
        'beneficiary', jsonb_build_object(
          'ispb', p_beneficiary->'ispb', 'name', p_beneficiary->'name', 'branch', p_beneficiary->'branch',
          'account', p_beneficiary->'account', 'document', p_beneficiary->'document', 'pixKey', p_pix_key,
          'pixKeyType', p_pix_key_type, 'institution', p_beneficiary->'institution', 'accountType', p_beneficiary->'accountType',
          'branchDigit', null, 'accountModel', 'PIX'),
        'pixAccountId', v_src.pix_account_id),
      'lines', jsonb_build_array(jsonb_build_object('id', p_ids[4], 'kind', 'PRIMARY', 'amount', -p_amount),
                                 jsonb_build_object('id', p_ids[5], 'kind', 'FEE', 'amount', -v_fee))));
end $$;

-- One Pix debit in one transaction: a batch of one (debit_pix_payout_batch).
create or replace function debit_pix_payout(
  p_payout_id text, p_tenant_id uuid, p_account_id uuid, p_channel text, p_amount bigint, p_pix_key text, p_pix_key_type text,
  p_beneficiary jsonb, p_qr jsonb, p_description text, p_idempotency_key text, p_request_hash text, p_ids text[], p_handoff jsonb,
  p_approval text
) returns table (code text, status text, reason text, fee_cents bigint, created_at timestamptz, details jsonb, trusted_contact boolean)
language sql volatile as $$
  select b.code, b.status, b.reason, b.fee_cents, b.created_at, b.details, b.trusted_contact
    from debit_pix_payout_batch(jsonb_build_array(jsonb_build_object(
           'payout_id', p_payout_id, 'tenant_id', p_tenant_id, 'account_id', p_account_id, 'channel', p_channel, 'amount', p_amount,
           'pix_key', p_pix_key, 'pix_key_type', p_pix_key_type, 'beneficiary', p_beneficiary, 'qr', p_qr, 'description', p_description,
           'idempotency_key', p_idempotency_key, 'request_hash', p_request_hash, 'ids', to_jsonb(p_ids), 'handoff', p_handoff,
           'approval', p_approval))) b
$$;
