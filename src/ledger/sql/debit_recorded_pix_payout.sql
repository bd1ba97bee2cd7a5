create or replace function debit_recorded_pix_payout(
  p_payout_id text,
  p_ids text[]                -- cuid2 ids made by the caller: 3 movements, then 4 entries
) returns table (status text, reason text, amount_cents bigint, fee_cents bigint, created_at timestamptz)
language plpgsql as $$
#variable_conflict use_column
declare
  v_payout pix_payout;
  v_fee bigint;
  r record;
  v_payer record;
  v_settlement uuid;
  v_revenue uuid;
  v_reason text;
  -- The limits: the one a debit breaks, else the periods it is counted in (check_and_count_limits).
  v_limit_refusal jsonb;
  v_period text;
  v_period_of date;
  v_month_of date;
  v_now timestamptz;
  v_common jsonb;
begin
  -- The debit of a payout recorded REQUESTED by a version that debited in the settlement workflow, for the runs
  -- recorded before the debit moved into the request, by the rules of debit_pix_payout_payer: the fee in force (the
  -- account's, else the tenant's, else 0), refused (REJECTED) when the account may not move money, its balance does
  -- not cover amount and fee or the amount breaks its Pix limits, else they leave it (PROCESSING) for the settlement
  -- and fee revenue accounts. A payout
  -- debited or refused already answers as it stands.
  select * into v_payout from pix_payout p where p.id = p_payout_id for update;
  if v_payout.id is null then raise exception 'unknown payout %', p_payout_id; end if;

  if v_payout.status = 'REQUESTED' then
    select case when v_payout.channel = 'QR_CODE_OUT' then f.qr_out else f.pix_out end into v_fee
      from fee_schedule_of(v_payout.account_id, v_payout.tenant_id) f;
    for r in select * from lock_accounts(v_payout.tenant_id, array[v_payout.account_id],
                                         case when v_fee > 0 then array['SETTLEMENT', 'FEE_REVENUE'] else array['SETTLEMENT'] end) loop
      case r.kind
        when 'HOLDER' then v_payer := r;
        when 'SETTLEMENT' then v_settlement := r.id;
        else v_revenue := r.id;
      end case;
    end loop;
    v_reason := case
      when not v_payer.may_move then 'SOURCE_NOT_ACTIVE'
      when v_payer.balance_cents < v_payout.amount_cents + v_fee then 'INSUFFICIENT_BALANCE'
    end;
    if v_reason is null then
      select * into v_limit_refusal, v_period, v_period_of, v_month_of
        from check_and_count_limits(v_payout.tenant_id, v_payer.id, v_payer.holder_type, 'PIX', v_payout.amount_cents, v_payout.pix_key, null, null);
      if v_limit_refusal is not null then v_reason := 'LIMIT_EXCEEDED'; end if;
    end if;

    if v_reason is null then
      v_now := clock_timestamp();
      v_common := jsonb_build_object(
        'operation_id', v_payout.id, 'channel', 'PIX', 'fee', 0, 'external_ref', null, 'end_to_end_id', null,
        'reverses_movement_id', null, 'metadata', '{}'::jsonb);
      perform post_movements(v_payout.tenant_id, v_now, posting_movements_of_json(jsonb_build_array(
        v_common || jsonb_build_object(
          'id', p_ids[1], 'account_id', v_payer.id, 'source', v_payout.channel, 'direction', 'DEBIT', 'status', 'PENDING',
          'payout_status', 'PROCESSING', 'status_external', 'PROCESSING', 'amount', v_payout.amount_cents, 'fee', v_fee,
          'description', v_payout.description,
          -- The debit's statement metadata, as debit_pix_payout_payer writes it.
          'metadata', jsonb_build_object(
            'date', iso_utc(v_now),
            'endToEndId', null,
            'payer', jsonb_build_object('branch', v_payer.agency, 'account', v_payer.number),
            'beneficiary', jsonb_build_object(
              'ispb', v_payout.beneficiary->'ispb', 'name', v_payout.beneficiary->'name', 'branch', v_payout.beneficiary->'branch',
              'account', v_payout.beneficiary->'account', 'document', v_payout.beneficiary->'document', 'pixKey', v_payout.pix_key,
              'pixKeyType', v_payout.pix_key_type, 'institution', v_payout.beneficiary->'institution',
              'accountType', v_payout.beneficiary->'accountType', 'branchDigit', null, 'accountModel', 'PIX'),
            'pixAccountId', v_payer.pix_account_id),
          'lines', jsonb_build_array(jsonb_build_object('id', p_ids[4], 'kind', 'PRIMARY', 'amount', -v_payout.amount_cents),
                                     jsonb_build_object('id', p_ids[5], 'kind', 'FEE', 'amount', -v_fee))),
        -- The tenant's side, as post_tenant_credits writes it.
        v_common || jsonb_build_object(
          'id', p_ids[2], 'account_id', v_settlement, 'source', 'SETTLEMENT', 'direction', 'CREDIT', 'status', 'PENDING',
          'payout_status', null, 'status_external', 'PROCESSING', 'amount', v_payout.amount_cents, 'description', 'Pix out ' || v_payout.id,
          'lines', jsonb_build_array(jsonb_build_object('id', p_ids[6], 'kind', 'PRIMARY', 'amount', v_payout.amount_cents))),
        v_common || jsonb_build_object(
          'id', p_ids[3], 'account_id', v_revenue, 'source', 'FEE_REVENUE', 'direction', 'CREDIT', 'status', 'DONE',
          'payout_status', null, 'status_external', 'SUCCESS', 'amount', v_fee, 'description', 'Tarifa Pix ' || v_payout.id,
          'lines', jsonb_build_array(jsonb_build_object('id', p_ids[7], 'kind', 'FEE', 'amount', v_fee))))));
    end if;

    update pix_payout p
       set status = case when v_reason is null then 'PROCESSING' else 'REJECTED' end, reason = v_reason, fee_cents = v_fee,
           movement_id = case when v_reason is null then p_ids[1] end,
           limit_period = case when v_reason is null then v_period end,
           limit_period_of = case when v_reason is null then v_period_of end,
           limit_month_of = case when v_reason is null then v_month_of end,
           refusal_details = case when v_reason = 'LIMIT_EXCEEDED' then v_limit_refusal end
     where p.id = v_payout.id
    returning * into v_payout;
  end if;

  return query select v_payout.status, v_payout.reason, v_payout.amount_cents, coalesce(v_payout.fee_cents, 0), v_payout.created_at;
end $$;
