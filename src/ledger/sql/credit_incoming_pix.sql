create or replace function credit_incoming_pix(
  p_tenant_id uuid,
  p_account_id uuid,
  p_amount bigint,
  p_end_to_end_id text,
  p_description text,
  p_payer jsonb,              -- ispb, name, branch, account, document, institution
  p_extra_metadata jsonb,     -- added to the statement metadata (the charge a payment pays), or {}
  p_ids text[]                -- cuid2 ids made by the caller: 3 movements, then 4 entries
) returns table (code text, movement_id text, fee_cents bigint, balance_after_cents bigint, pix_account_id text,
                 core_account_id text, credited_at timestamptz, payment_date text)
language plpgsql as $$
#variable_conflict use_column
declare
  v_fee bigint;
  r record;
  v_holder record;
  v_has_holder boolean := false;
  v_settlement uuid;
  v_revenue uuid;
  v_now timestamptz;
  v_common jsonb;
begin
  -- Any incoming Pix (a charge's payment too): the amount from the settlement account (money at the Pix provider),
  -- the receive fee to the tenant's revenue, one statement transaction on the holder's account. The fee is read
  -- before the locks: the fee revenue account is locked only when a fee applies. An account that is not a holder
  -- account of the tenant locks no holder: ACCOUNT_NOT_FOUND.
  select f.pix_in into v_fee from fee_schedule_of(p_account_id, p_tenant_id) f;
  for r in select * from lock_accounts(p_tenant_id, array[p_account_id],
                                       case when v_fee > 0 then array['SETTLEMENT', 'FEE_REVENUE'] else array['SETTLEMENT'] end) loop
    case r.kind
      when 'HOLDER' then v_holder := r; v_has_holder := true;
      when 'SETTLEMENT' then v_settlement := r.id;
      else v_revenue := r.id;
    end case;
  end loop;
  -- The account receives only what it may move (account_refusal): before KYC approval (or rejected) it is
  -- ACCOUNT_NOT_APPROVED; when its holder is blocked or closed, ACCOUNT_NOT_ACTIVE. Either way nothing is credited and
  -- the provider returns the Pix to its payer.
  code := case
    when not v_has_holder then 'ACCOUNT_NOT_FOUND'
    when v_holder.status <> 'APPROVED' then 'ACCOUNT_NOT_APPROVED'
    when not v_holder.may_move then 'ACCOUNT_NOT_ACTIVE'
    when v_fee >= p_amount then 'AMOUNT_BELOW_RECEIVE_FEE'
  end;
  if code is not null then return next; return; end if;

  v_now := clock_timestamp();
  payment_date := sao_paulo_payment_date(v_now);
  v_common := jsonb_build_object(
    'operation_id', p_end_to_end_id, 'channel', 'PIX', 'status', 'DONE', 'payout_status', null, 'status_external', 'SUCCESS',
    'fee', 0, 'external_ref', null, 'end_to_end_id', p_end_to_end_id, 'reverses_movement_id', null, 'metadata', '{}'::jsonb);
  -- The holder's balance after the credit: its movement is the first.
  balance_after_cents := (post_movements(p_tenant_id, v_now, posting_movements_of_json(jsonb_build_array(
      v_common || jsonb_build_object(
        'id', p_ids[1], 'account_id', v_holder.id, 'source', 'PIX_IN', 'direction', 'CREDIT', 'amount', p_amount, 'fee', v_fee,
        'description', p_description,
        'metadata', jsonb_build_object(
          'date', iso_utc(v_now), 'endToEndId', p_end_to_end_id, 'paymentDate', payment_date,
          'payer', jsonb_build_object('ispb', p_payer->'ispb', 'name', p_payer->'name', 'branch', p_payer->'branch',
                                      'account', p_payer->'account', 'document', p_payer->'document', 'institution', p_payer->'institution'),
          'beneficiary', jsonb_build_object('branch', v_holder.agency, 'account', v_holder.number)) || p_extra_metadata,
        'lines', jsonb_build_array(jsonb_build_object('id', p_ids[4], 'kind', 'PRIMARY', 'amount', p_amount),
                                   jsonb_build_object('id', p_ids[5], 'kind', 'FEE', 'amount', -v_fee))),
      v_common || jsonb_build_object(
        'id', p_ids[2], 'account_id', v_settlement, 'source', 'SETTLEMENT', 'direction', 'DEBIT', 'amount', p_amount,
        'description', 'Pix in ' || p_end_to_end_id,
        'lines', jsonb_build_array(jsonb_build_object('id', p_ids[6], 'kind', 'PRIMARY', 'amount', -p_amount))),
      v_common || jsonb_build_object(
        'id', p_ids[3], 'account_id', v_revenue, 'source', 'FEE_REVENUE', 'direction', 'CREDIT', 'amount', v_fee,
        'description', 'Tarifa Pix ' || p_end_to_end_id,
        'lines', jsonb_build_array(jsonb_build_object('id', p_ids[7], 'kind', 'FEE', 'amount', v_fee)))))))[1];

  code := 'CREDITED';
  movement_id := p_ids[1];
  fee_cents := v_fee;
  pix_account_id := v_holder.pix_account_id;
  core_account_id := v_holder.core_account_id;
  credited_at := v_now;
  return next;
end $$;
