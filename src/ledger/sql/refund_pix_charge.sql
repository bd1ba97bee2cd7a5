create or replace function refund_pix_charge(
  p_tenant_id uuid,
  p_account_id uuid,
  p_charge_id text,           -- PAID, locked by the caller, who checked what may still be refunded
  p_refund_id text,
  p_amount bigint,
  p_end_to_end_id text,       -- the devolução's
  p_idempotency_key text,
  p_ids text[]                -- cuid2 ids made by the caller: 2 movements, then 2 entries
) returns table (code text, movement_id text, created_at timestamptz)
language plpgsql as $$
#variable_conflict use_column
declare
  v_charge pix_charge;
  r record;
  v_holder record;
  v_settlement uuid;
  v_now timestamptz;
  v_common jsonb;
begin
  -- Part or all of what a charge received, back to its payer: out of the holder's account (the receive fee is not
  -- returned) to the settlement account, whence the provider sends it on; the refund is recorded with its key.
  select * into v_charge from pix_charge c where c.id = p_charge_id and c.account_id = p_account_id and c.tenant_id = p_tenant_id;
  if v_charge.id is null then raise exception 'unknown charge % of account %', p_charge_id, p_account_id; end if;
  for r in select * from lock_accounts(p_tenant_id, array[p_account_id], array['SETTLEMENT']) loop
    if r.kind = 'HOLDER' then v_holder := r; else v_settlement := r.id; end if;
  end loop;
  if v_holder.balance_cents < p_amount then code := 'INSUFFICIENT_BALANCE'; return next; return; end if;

  v_now := clock_timestamp();
  v_common := jsonb_build_object(
    'operation_id', p_refund_id, 'channel', 'PIX', 'status', 'DONE', 'payout_status', null, 'status_external', 'SUCCESS',
    'amount', p_amount, 'fee', 0, 'external_ref', null, 'end_to_end_id', p_end_to_end_id, 'metadata', '{}'::jsonb);
  perform post_movements(p_tenant_id, v_now, posting_movements_of_json(jsonb_build_array(
    v_common || jsonb_build_object(
      'id', p_ids[1], 'account_id', v_holder.id, 'source', 'REVERSAL', 'direction', 'DEBIT', 'reverses_movement_id', v_charge.movement_id,
      'description', 'Devolução de Pix para ' || (v_charge.payer->>'name'),
      -- An outgoing Pix's statement metadata: this account pays, the charge's payer receives.
      'metadata', jsonb_build_object(
        'date', iso_utc(v_now), 'endToEndId', p_end_to_end_id, 'paymentDate', sao_paulo_payment_date(v_now),
        'payer', jsonb_build_object('branch', v_holder.agency, 'account', v_holder.number),
        'beneficiary', jsonb_build_object('ispb', v_charge.payer->'ispb', 'name', v_charge.payer->'name', 'branch', v_charge.payer->'branch',
                                          'account', v_charge.payer->'account', 'document', v_charge.payer->'document',
                                          'institution', v_charge.payer->'institution'),
        'originalEndToEndId', v_charge.end_to_end_id, 'txid', v_charge.txid, 'chargeId', v_charge.id),
      'lines', jsonb_build_array(jsonb_build_object('id', p_ids[3], 'kind', 'PRIMARY', 'amount', -p_amount))),
    v_common || jsonb_build_object(
      'id', p_ids[2], 'account_id', v_settlement, 'source', 'SETTLEMENT', 'direction', 'CREDIT', 'reverses_movement_id', null,
      'description', 'Pix devolução ' || p_end_to_end_id,
      'lines', jsonb_build_array(jsonb_build_object('id', p_ids[4], 'kind', 'PRIMARY', 'amount', p_amount))))));

  insert into pix_charge_refund (id, charge_id, amount_cents, refund_end_to_end_id, movement_id, idempotency_key, created_at)
  values (p_refund_id, v_charge.id, p_amount, p_end_to_end_id, p_ids[1], p_idempotency_key, v_now);
  update pix_charge c set refunded_cents = c.refunded_cents + p_amount where c.id = v_charge.id;
  code := 'REFUNDED';
  movement_id := p_ids[1];
  created_at := v_now;
  return next;
end $$;
