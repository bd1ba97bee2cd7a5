-- The Pix provider's notifications (src/pix/provider-notifications.ts), each applied once per notification id in the
-- transaction that moves its money. A payout's notification is applied whole by one statement
-- (apply_pix_payout_notification): the provider sends one for every payout, and as a transaction of the api's
-- statements it cost PostgreSQL and the api as much as the payment's own debit (bench/README.md). An incoming Pix is
-- applied by the api's transaction, recorded by the same rule (record_provider_notification).

-- Records a notification by its id, or answers what the one recorded under that id did: RECORDED (its result is
-- written when it is applied, in the same transaction), DUPLICATE (the same body: `result` is what it did then) or
-- NOTIFICATION_ID_REUSED (another body). The same id sent twice at once waits here for the first one's transaction.
create or replace function record_provider_notification(p_id text, p_type text, p_end_to_end_id text, p_body_hash text)
returns table (code text, seen_type text, result jsonb)
language plpgsql as $$
#variable_conflict use_column
declare
  v_seen pix_provider_notification;
begin
  insert into pix_provider_notification (id, type, end_to_end_id, body_hash) values (p_id, p_type, p_end_to_end_id, p_body_hash)
  on conflict (id) do nothing;
  if found then code := 'RECORDED'; return next; return; end if;
  select * into v_seen from pix_provider_notification n where n.id = p_id;
  return query select case when v_seen.body_hash = p_body_hash then 'DUPLICATE' else 'NOTIFICATION_ID_REUSED' end, v_seen.type, v_seen.result;
end $$;

-- What applying a recorded notification did, answered again to the same notification sent later.
create or replace function finish_provider_notification(p_id text, p_result jsonb) returns void
language sql as $$
  update pix_provider_notification set result = p_result where id = p_id
$$;

-- A payout's notification as the provider answers it: the payout as it stands after it.
create or replace function payout_notification_result(p_payout pix_payout) returns jsonb
language sql immutable as $$
  select jsonb_build_object('payoutId', p_payout.id, 'payoutStatus', p_payout.status, 'refundedCents', p_payout.refunded_cents::text)
$$;

-- Applies a notification about a payout, once per id, in one statement:
--   payout.settled             settle_pix_payout
--   payout.failed, .cancelled  reverse_pix_payout
--   payout.returned            settle_pix_payout when not seen settled yet (at p_settled_at), then refund_pix_payout
-- A payout already final is left as it stands by those functions, and answered so. Refused, with nothing written:
-- PAYOUT_NOT_FOUND (none, or one never submitted: REQUESTED or REJECTED), END_TO_END_ID_MISMATCH (the payout settled
-- under another id, `expected_end_to_end_id`), PAYOUT_NOT_RETURNABLE (a return of a failed or cancelled payout),
-- RETURN_EXCEEDS_PAYOUT (more than is left to return, `left_cents`), NOTIFICATION_ID_REUSED. Answered DUPLICATE (the
-- same notification again: `result` is what it did then) or APPLIED, with the payout's tenant, account and state for
-- the wake of its settlement workflow.
create or replace function apply_pix_payout_notification(
  p_id text,
  p_type text,
  p_body_hash text,
  p_payout_id text,
  p_end_to_end_id text,
  p_settled_at timestamptz,   -- payout.settled; payout.returned: when the payout settled, if not seen settled yet
  p_reason text,              -- payout.failed, payout.cancelled
  p_return_end_to_end_id text,
  p_return_cents bigint,
  p_returned_at text,         -- payout.returned, as the event says it
  p_ids text[]                -- cuid2 ids made by the caller for a reversal's or a return's posting (3 movements, then 4 entries)
) returns table (code text, seen_type text, result jsonb, tenant_id uuid, account_id uuid, payout_status text,
                 expected_end_to_end_id text, left_cents bigint)
language plpgsql as $$
#variable_conflict use_column
declare
  v_payout pix_payout;
  v_recorded record;
  v_refund record;
begin
  -- The payout first, locked: the steps of one payout run one after the other, and what refuses it is decided on it
  -- before anything is written.
  select * into v_payout from pix_payout p where p.id = p_payout_id for update;
  if v_payout.id is null or v_payout.status in ('REQUESTED', 'REJECTED') then code := 'PAYOUT_NOT_FOUND'; return next; return; end if;
  if v_payout.end_to_end_id is not null and v_payout.end_to_end_id <> p_end_to_end_id then
    code := 'END_TO_END_ID_MISMATCH'; expected_end_to_end_id := v_payout.end_to_end_id; return next; return;
  end if;
  if p_type = 'payout.returned' and v_payout.status in ('FAILED', 'CANCELLED') then
    code := 'PAYOUT_NOT_RETURNABLE'; payout_status := v_payout.status; return next; return;
  end if;

  if p_type = 'payout.returned' then
    -- Only a settled Pix comes back: a payout not seen settled settles first. A return past what is left undoes that
    -- settlement and the notification's record with it (the block's subtransaction, which only a return pays for): a
    -- refused notification leaves nothing, and may be sent again.
    begin
      select * into v_recorded from record_provider_notification(p_id, p_type, p_end_to_end_id, p_body_hash);
      if v_recorded.code = 'RECORDED' then
        perform settle_pix_payout(p_payout_id, p_end_to_end_id, p_settled_at);
        select * into v_refund from refund_pix_payout(p_payout_id, p_return_end_to_end_id, p_return_cents, p_returned_at, p_ids);
        if v_refund.code = 'RETURN_EXCEEDS_PAYOUT' then raise exception using errcode = 'BK001'; end if;
      end if;
    exception when sqlstate 'BK001' then
      code := 'RETURN_EXCEEDS_PAYOUT'; left_cents := v_refund.left_cents; return next; return;
    end;
  else
    select * into v_recorded from record_provider_notification(p_id, p_type, p_end_to_end_id, p_body_hash);
    if v_recorded.code = 'RECORDED' and p_type = 'payout.settled' then
      perform settle_pix_payout(p_payout_id, p_end_to_end_id, p_settled_at);
    elsif v_recorded.code = 'RECORDED' then
      perform reverse_pix_payout(p_payout_id, case p_type when 'payout.failed' then 'FAILED' else 'CANCELLED' end, p_end_to_end_id, p_reason, p_ids);
    end if;
  end if;
  if v_recorded.code <> 'RECORDED' then
    return query select v_recorded.code, v_recorded.seen_type, v_recorded.result, null::uuid, null::uuid, null::text, null::text, null::bigint;
    return;
  end if;

  select * into v_payout from pix_payout p where p.id = p_payout_id;
  result := payout_notification_result(v_payout);
  perform finish_provider_notification(p_id, result);
  return query select 'APPLIED', p_type, result, v_payout.tenant_id, v_payout.account_id, v_payout.status, null::text, null::bigint;
end $$;
