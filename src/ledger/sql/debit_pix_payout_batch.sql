-- Its answer gained `details` (a limit's refusal), then `trusted_contact`: a return type changes only by dropping the
-- function.
drop function if exists debit_pix_payout_batch(jsonb);
-- Generic plans: PostgreSQL otherwise planned its statements on the batch's JSON again at every call.
create function debit_pix_payout_batch(p_items jsonb)
returns table (ord bigint, code text, status text, reason text, fee_cents bigint, created_at timestamptz, details jsonb,
               trusted_contact boolean)
language plpgsql set plan_cache_mode = force_generic_plan as $$
#variable_conflict use_column
declare
  r record;
  d record;
  -- Debits accepted so far: their postings, what they take from each payer, each one's payout id with its request
  -- and fee, and their workflows' hand-offs. Arrays, appended in place: a JSON value appended to was copied whole
  -- at every request of the batch (a sixth of a debit's instructions, callgrind).
  v_debits jsonb[] := '{}';
  v_payers uuid[] := '{}';
  v_debited bigint[] := '{}';
  v_accepted text[] := '{}';
  v_accepted_hashes text[] := '{}';
  v_accepted_fees bigint[] := '{}';
  v_handoffs jsonb[] := '{}';
  v_k integer;
  v_payer uuid;
  v_debits_json jsonb;
begin
  -- Pix debits in one transaction. The payers are locked first, all of them, in id order; each debit is then decided
  -- on its payer (debit_pix_payout_payer), and those accepted are posted together last (post_pix_debits), so batches
  -- of one tenant run beside each other and queue only for the tenant's own accounts and their commit.
  perform lock_account_rows(array(select (e->>'account_id')::uuid from jsonb_array_elements(p_items) e));

  -- Each request with whether its receiver is a trusted contact of the payer now, for the answer (read here, the
  -- request does not pay a query of its own for it): by the key paid, or, for an account of this platform, by its
  -- branch and number.
  for r in
    select e.item, e.ord, t.trusted
      from jsonb_array_elements(p_items) with ordinality e(item, ord)
     cross join lateral trusted_contact_match((e.item->>'account_id')::uuid, e.item->>'pix_key',
       case when e.item->'beneficiary'->>'ispb' = platform_ispb() then e.item->'beneficiary'->>'branch' end,
       case when e.item->'beneficiary'->>'ispb' = platform_ispb() then e.item->'beneficiary'->>'account' end, now()) t
     order by e.ord
  loop
    v_k := array_position(v_accepted, r.item->>'payout_id');
    if v_k is not null then
      -- The same request twice in one batch: the second answers as the first (accepted, not recorded yet).
      return query select r.ord,
        case when v_accepted_hashes[v_k] <> r.item->>'request_hash' then 'IDEMPOTENCY_KEY_REUSED' else 'RECORDED' end,
        'PROCESSING', null::text, v_accepted_fees[v_k], now(), null::jsonb, r.trusted;
      continue;
    end if;
    v_payer := (r.item->>'account_id')::uuid;
    v_k := array_position(v_payers, v_payer);
    select * into d from debit_pix_payout_payer(
      r.item->>'payout_id', (r.item->>'tenant_id')::uuid, v_payer, r.item->>'channel',
      (r.item->>'amount')::bigint, r.item->>'pix_key', r.item->>'pix_key_type', r.item->'beneficiary',
      nullif(r.item->'qr', 'null'::jsonb), r.item->>'description', r.item->>'idempotency_key', r.item->>'request_hash',
      array(select jsonb_array_elements_text(r.item->'ids')), coalesce(v_debited[v_k], 0), r.item->>'approval');
    if d.debit is not null then
      v_debits := v_debits || d.debit;
      if v_k is null then v_payers := v_payers || v_payer; v_debited := v_debited || 0::bigint; v_k := cardinality(v_payers); end if;
      v_debited[v_k] := v_debited[v_k] + (r.item->>'amount')::bigint + d.fee_cents;
      v_accepted := v_accepted || (r.item->>'payout_id');
      v_accepted_hashes := v_accepted_hashes || (r.item->>'request_hash');
      v_accepted_fees := v_accepted_fees || d.fee_cents;
      -- The settlement workflow's hand-off, due at once: no request waits for Temporal, the reconciler starts it.
      if nullif(r.item->'handoff', 'null'::jsonb) is not null then v_handoffs := v_handoffs || (r.item->'handoff'); end if;
    end if;
    return query select r.ord, d.code, d.status, d.reason, d.fee_cents, d.created_at, d.details, r.trusted;
  end loop;

  -- The settlement workflows' hand-offs and the payouts first, the posting last: it locks the tenant's settlement
  -- account, which every batch of the tenant waits for, so nothing else is done under that lock but the posting and
  -- the commit. A payout's reference to its movement is checked at commit.
  if cardinality(v_handoffs) > 0 then perform record_workflow_starts(to_jsonb(v_handoffs), true); end if;
  if cardinality(v_debits) > 0 then
    v_debits_json := to_jsonb(v_debits);
    insert into pix_payout (id, tenant_id, account_id, channel, amount_cents, fee_cents, pix_key, pix_key_type, beneficiary, qr,
                            description, idempotency_key, request_hash, status, movement_id, limit_period, limit_period_of,
                            limit_month_of)
    select p.payout_id, p.tenant_id, p.account_id, p.channel, p.amount, p.fee, p.pix_key, p.pix_key_type, p.beneficiary,
           nullif(p.qr, 'null'::jsonb), p.description, p.idempotency_key, p.request_hash, 'PROCESSING', p.ids[1], p.limit_period,
           p.limit_period_of, p.limit_month_of
      from jsonb_to_recordset(v_debits_json) as p(payout_id text, tenant_id uuid, account_id uuid, channel text, amount bigint, fee bigint,
                                             pix_key text, pix_key_type text, beneficiary jsonb, qr jsonb, description text,
                                             idempotency_key text, request_hash text, ids text[], limit_period text,
                                             limit_period_of date, limit_month_of date);
    perform post_pix_debits(v_debits_json);
  end if;
end $$;
