-- Money of a payout back to its payer: the whole amount and fee when the provider failed or cancelled it
-- (`reverse_pix_payout`), or what the receiver returned of a settled one (`refund_pix_payout`); the amount is given
-- back to the limits' periods the debit was counted in (give_back_limits), those not over yet. Each locks the payout
-- first (lock_pix_payout, settle_pix_payout.sql), so the steps of one payout run one after the other, and answers what
-- its event needs. The events' data is defined in src/events/catalog.ts; test/domain/events.test.ts parses what is
-- written here with it.

create or replace function post_pix_payout_return(
  p_payout pix_payout,        -- locked by the caller
  p_amount bigint,
  p_fee bigint,
  p_description text,
  p_end_to_end_id text,       -- the return's, or null for a reversal
  p_ids text[]                -- cuid2 ids made by the caller: 3 movements, then 4 entries
) returns table (movement_id text, pix_account_id text, at timestamptz)
language plpgsql as $$
#variable_conflict use_column
declare
  r record;
  v_holder record;
  v_settlement uuid;
  v_revenue uuid;
  v_now timestamptz;
  v_common jsonb;
begin
  -- REVERSAL entries on a movement that reverses the debit: the amount out of the settlement account, the fee (when
  -- it returns) out of the fee revenue account. The operation is the payout and the return's end-to-end id, so a
  -- return posts once.
  for r in select * from lock_accounts(p_payout.tenant_id, array[p_payout.account_id],
                                       case when p_fee > 0 then array['SETTLEMENT', 'FEE_REVENUE'] else array['SETTLEMENT'] end) loop
    case r.kind
      when 'HOLDER' then v_holder := r;
      when 'SETTLEMENT' then v_settlement := r.id;
      else v_revenue := r.id;
    end case;
  end loop;

  v_now := clock_timestamp();
  v_common := jsonb_build_object(
    'operation_id', p_payout.id || ':' || coalesce(p_end_to_end_id, 'reversal'), 'channel', 'PIX', 'status', 'DONE',
    'payout_status', null, 'status_external', 'SUCCESS', 'fee', 0, 'description', p_description, 'external_ref', null,
    'end_to_end_id', p_end_to_end_id, 'reverses_movement_id', p_payout.movement_id, 'metadata', '{}'::jsonb);
  perform post_movements(p_payout.tenant_id, v_now, posting_movements_of_json(jsonb_build_array(
    v_common || jsonb_build_object(
      'id', p_ids[1], 'account_id', v_holder.id, 'source', 'REVERSAL', 'direction', 'CREDIT', 'amount', p_amount + p_fee,
      'metadata', jsonb_build_object('date', iso_utc(v_now), 'endToEndId', p_end_to_end_id, 'reversesMovementId', p_payout.movement_id),
      'lines', jsonb_build_array(jsonb_build_object('id', p_ids[4], 'kind', 'REVERSAL', 'amount', p_amount),
                                 jsonb_build_object('id', p_ids[5], 'kind', 'REVERSAL', 'amount', p_fee))),
    v_common || jsonb_build_object(
      'id', p_ids[2], 'account_id', v_settlement, 'source', 'SETTLEMENT', 'direction', 'DEBIT', 'amount', p_amount,
      'lines', jsonb_build_array(jsonb_build_object('id', p_ids[6], 'kind', 'REVERSAL', 'amount', -p_amount))),
    v_common || jsonb_build_object(
      'id', p_ids[3], 'account_id', v_revenue, 'source', 'FEE_REVENUE', 'direction', 'DEBIT', 'amount', p_fee,
      'lines', jsonb_build_array(jsonb_build_object('id', p_ids[7], 'kind', 'REVERSAL', 'amount', -p_fee))))));
  return query select p_ids[1], v_holder.pix_account_id, v_now;
end $$;

create or replace function reverse_pix_payout(
  p_payout_id text,
  p_state text,               -- FAILED | CANCELLED
  p_end_to_end_id text,       -- as the provider reported it, for the event
  p_reason text,
  p_ids text[]                -- cuid2 ids made by the caller: 3 movements, then 4 entries
) returns table (code text)
language plpgsql as $$
#variable_conflict use_column
declare
  v_payout pix_payout;
  v_return record;
begin
  -- Only a payout still PROCESSING is reversed: answered UNCHANGED otherwise (a notification and the workflow's query
  -- both report the outcome; whichever comes second finds it applied).
  v_payout := lock_pix_payout(p_payout_id);
  if v_payout.status <> 'PROCESSING' then code := 'UNCHANGED'; return next; return; end if;

  select * into v_return from post_pix_payout_return(v_payout, v_payout.amount_cents, coalesce(v_payout.fee_cents, 0),
                                                     'Estorno: ' || p_reason, null, p_ids);
  if v_payout.limit_month_of is not null then
    perform give_back_limits(v_payout.account_id, 'PIX', v_payout.amount_cents, v_payout.limit_period, v_payout.limit_period_of,
                             v_payout.limit_month_of);
  end if;
  -- The debit, and the settlement account's credit of the same operation, are marked failed.
  update movement m set payout_status = p_state, status = 'FAILED', status_external = 'FAILURE' where m.id = v_payout.movement_id;
  update movement m set status = 'FAILED', status_external = 'FAILURE'
   where m.operation_id = v_payout.id and m.source = 'SETTLEMENT' and m.tenant_id = v_payout.tenant_id;
  update pix_payout p set status = p_state, reason = p_reason where p.id = v_payout.id;

  insert into event_outbox (id, tenant_id, account_id, pix_account_id, type, data)
  values (gen_random_uuid(), v_payout.tenant_id, v_payout.account_id, v_return.pix_account_id,
          case when p_state = 'FAILED' then 'pix.payout.failed' else 'pix.payout.cancelled' end,
          jsonb_build_object('payoutId', v_payout.id, 'movementId', v_payout.movement_id, 'endToEndId', p_end_to_end_id,
                             'amountCents', v_payout.amount_cents::text, 'occurredAt', iso_utc(v_return.at), 'reason', p_reason));
  code := 'REVERSED';
  return next;
end $$;

create or replace function refund_pix_payout(
  p_payout_id text,
  p_end_to_end_id text,       -- the return's
  p_amount bigint,
  p_refunded_at text,         -- when the receiver returned it, as the event says it
  p_ids text[]                -- cuid2 ids made by the caller: 3 movements, then 4 entries
) returns table (code text, left_cents bigint)  -- left_cents: what was left to return before this return
language plpgsql as $$
#variable_conflict use_column
declare
  v_payout pix_payout;
  v_return record;
begin
  -- A settled payout returned by the receiver, in part or whole, maybe several times (a charge refunded in parts):
  -- each return once, by its end-to-end id, and together never more than the amount sent. The fee stays paid.
  v_payout := lock_pix_payout(p_payout_id);
  if v_payout.status not in ('POSTED', 'REFUNDED')
     or exists (select 1 from movement m where m.operation_id = v_payout.id || ':' || p_end_to_end_id and m.tenant_id = v_payout.tenant_id) then
    code := 'UNCHANGED'; return next; return;
  end if;
  left_cents := v_payout.amount_cents - v_payout.refunded_cents;
  if p_amount <= 0 or p_amount > left_cents then code := 'RETURN_EXCEEDS_PAYOUT'; return next; return; end if;

  select * into v_return from post_pix_payout_return(v_payout, p_amount, 0, 'Devolução de Pix enviado', p_end_to_end_id, p_ids);
  if v_payout.limit_month_of is not null then
    perform give_back_limits(v_payout.account_id, 'PIX', p_amount, v_payout.limit_period, v_payout.limit_period_of, v_payout.limit_month_of);
  end if;
  update movement m set payout_status = 'REFUNDED' where m.id = v_payout.movement_id;
  update pix_payout p set status = 'REFUNDED', refunded_cents = p.refunded_cents + p_amount where p.id = v_payout.id;

  insert into event_outbox (id, tenant_id, account_id, pix_account_id, type, data)
  values (gen_random_uuid(), v_payout.tenant_id, v_payout.account_id, v_return.pix_account_id, 'pix.payout.refunded',
          jsonb_build_object('payoutId', v_payout.id, 'movementId', v_return.movement_id, 'endToEndId', v_payout.end_to_end_id,
                             'amountCents', v_payout.amount_cents::text, 'occurredAt', p_refunded_at,
                             'refundEndToEndId', p_end_to_end_id, 'refundAmountCents', p_amount::text));
  code := 'REFUNDED';
  return next;
end $$;
