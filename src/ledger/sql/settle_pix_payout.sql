-- The first step of each step of a payout after its debit (its settlement here, its reversal and returns in
-- return_pix_payout.sql): the payout, locked for the rest of the transaction, so that they run one after the other.
create or replace function lock_pix_payout(p_payout_id text) returns pix_payout
language plpgsql as $$
declare
  v_payout pix_payout;
begin
  select * into v_payout from pix_payout p where p.id = p_payout_id for update;
  if v_payout.id is null then raise exception 'unknown payout %', p_payout_id; end if;
  return v_payout;
end $$;

-- A payout the provider settled: POSTED with its end-to-end id and settlement time, its debit's movement and the
-- settlement account's credit marked done, and `pix.payout.succeeded` written, in one statement of the caller's
-- transaction (a notification's, or the workflow's fallback query). No money moves: the debit posted it all. A payout
-- no longer PROCESSING is answered UNCHANGED: a notification and the workflow's query both report the outcome, and
-- whichever comes second finds it applied. The event's data is defined in src/events/catalog.ts;
-- test/domain/events.test.ts parses what is written here with it.
create or replace function settle_pix_payout(
  p_payout_id text,
  p_end_to_end_id text,
  p_settled_at timestamptz    -- when the provider settled it
) returns table (code text)
language plpgsql as $$
#variable_conflict use_column
declare
  v_payout pix_payout;
  v_payer record;
begin
  v_payout := lock_pix_payout(p_payout_id);
  if v_payout.status <> 'PROCESSING' then code := 'UNCHANGED'; return next; return; end if;

  -- A payout PROCESSING was debited: its debit's movement is recorded. The statement shows it paid from now on.
  update movement m
     set payout_status = 'POSTED', status = 'DONE', status_external = 'SUCCESS', end_to_end_id = p_end_to_end_id,
         metadata = m.metadata || jsonb_build_object('endToEndId', p_end_to_end_id, 'paymentDate', sao_paulo_payment_date(p_settled_at))
   where m.id = v_payout.movement_id;
  update movement m set status = 'DONE', status_external = 'SUCCESS', end_to_end_id = p_end_to_end_id
   where m.operation_id = v_payout.id and m.source = 'SETTLEMENT' and m.tenant_id = v_payout.tenant_id;
  update pix_payout p set status = 'POSTED', end_to_end_id = p_end_to_end_id, settled_at = p_settled_at where p.id = v_payout.id;

  select a.agency, a.number, a.pix_account_id into v_payer from account a where a.id = v_payout.account_id;
  insert into event_outbox (id, tenant_id, account_id, pix_account_id, type, data)
  values (gen_random_uuid(), v_payout.tenant_id, v_payout.account_id, v_payer.pix_account_id, 'pix.payout.succeeded',
          jsonb_build_object(
            'payoutId', v_payout.id, 'endToEndId', p_end_to_end_id, 'movementId', v_payout.movement_id,
            'occurredAt', iso_utc(p_settled_at), 'amountCents', v_payout.amount_cents::text,
            'payerBranch', v_payer.agency, 'payerAccount', v_payer.number,
            'beneficiaryName', v_payout.beneficiary->'name', 'beneficiaryBranch', v_payout.beneficiary->'branch',
            'beneficiaryPixKey', v_payout.pix_key, 'beneficiaryAccount', v_payout.beneficiary->'account',
            'beneficiaryDocument', v_payout.beneficiary->'document', 'beneficiaryPixKeyType', v_payout.pix_key_type,
            'beneficiaryAccountType', v_payout.beneficiary->'accountType',
            'beneficiaryInstitution', v_payout.beneficiary->'institution'));
  code := 'SETTLED';
  return next;
end $$;
