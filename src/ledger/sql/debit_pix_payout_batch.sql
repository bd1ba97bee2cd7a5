create or replace function debit_pix_payout_batch(p_items jsonb)
returns table (ord bigint, code text, status text, reason text, fee_cents bigint, created_at timestamptz)
language plpgsql as $$
#variable_conflict use_column
declare
  r record;
begin
  -- Every account the items' debits will lock, in id order, before the first of them: the payers, their tenants'
  -- settlement accounts, and the fee revenue account of a tenant where a Pix fee may apply (a superset is harmless;
  -- an account locked later, out of order, could deadlock with another batch).
  perform 1 from account a
   where a.id in (select (e->>'account_id')::uuid from jsonb_array_elements(p_items) e)
      or (a.kind = 'SETTLEMENT' and a.tenant_id in (select (e->>'tenant_id')::uuid from jsonb_array_elements(p_items) e))
      or (a.kind = 'FEE_REVENUE' and a.tenant_id in (select (e->>'tenant_id')::uuid from jsonb_array_elements(p_items) e)
          and exists (select 1 from fee_schedule f where f.tenant_id = a.tenant_id and (f.pix_out_cents > 0 or f.qr_out_cents > 0)))
   order by a.id
     for no key update of a;

  for r in select e.item, e.ord from jsonb_array_elements(p_items) with ordinality e(item, ord) loop
    return query
      select r.ord, d.* from debit_pix_payout(
        r.item->>'payout_id', (r.item->>'tenant_id')::uuid, (r.item->>'account_id')::uuid, r.item->>'channel',
        (r.item->>'amount')::bigint, r.item->>'pix_key', r.item->>'pix_key_type', r.item->'beneficiary',
        nullif(r.item->'qr', 'null'::jsonb), r.item->>'description', r.item->>'idempotency_key', r.item->>'request_hash',
        array(select jsonb_array_elements_text(r.item->'ids')), nullif(r.item->'handoff', 'null'::jsonb)) d;
  end loop;
end $$;
