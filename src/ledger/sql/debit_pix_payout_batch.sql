create or replace function debit_pix_payout_batch(p_items jsonb)
returns table (ord bigint, code text, status text, reason text, fee_cents bigint, created_at timestamptz)
language plpgsql as $$
#variable_conflict use_column
declare
  r record;
  d record;
  v_credits jsonb := '[]'::jsonb;
begin
  -- Several Pix debits in one transaction. The payers are locked first, all of them, in id order; each debit then
  -- does its payer's side; the tenants' side of all of them is posted last, in one statement (post_tenant_credits),
  -- so batches of one tenant run beside each other and queue only for that statement and their commit.
  perform 1 from account a
   where a.id in (select (e->>'account_id')::uuid from jsonb_array_elements(p_items) e)
   order by a.id
     for no key update of a;

  for r in select e.item, e.ord from jsonb_array_elements(p_items) with ordinality e(item, ord) loop
    select * into d from debit_pix_payout_payer(
      r.item->>'payout_id', (r.item->>'tenant_id')::uuid, (r.item->>'account_id')::uuid, r.item->>'channel',
      (r.item->>'amount')::bigint, r.item->>'pix_key', r.item->>'pix_key_type', r.item->'beneficiary',
      nullif(r.item->'qr', 'null'::jsonb), r.item->>'description', r.item->>'idempotency_key', r.item->>'request_hash',
      array(select jsonb_array_elements_text(r.item->'ids')), nullif(r.item->'handoff', 'null'::jsonb));
    if d.credit is not null then v_credits := v_credits || jsonb_build_array(d.credit); end if;
    return query select r.ord, d.code, d.status, d.reason, d.fee_cents, d.created_at;
  end loop;

  if jsonb_array_length(v_credits) > 0 then perform post_tenant_credits(v_credits); end if;
end $$;
