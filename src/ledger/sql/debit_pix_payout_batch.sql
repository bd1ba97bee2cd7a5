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
  -- Debits accepted so far: their postings, what they take from each payer, and each one's request by payout id.
  v_debits jsonb := '[]'::jsonb;
  v_debited jsonb := '{}'::jsonb;
  v_accepted jsonb := '{}'::jsonb;
  v_handoffs jsonb := '[]'::jsonb;
  -- The receiver is a trusted contact of the payer now (is_trusted_contact), for the answer: read here, the request
  -- does not pay a query of its own for it.
  v_trusted boolean;
begin
  -- Pix debits in one transaction. The payers are locked first, all of them, in id order; each debit is then decided
  -- on its payer (debit_pix_payout_payer), and those accepted are posted together last (post_pix_debits), so batches
  -- of one tenant run beside each other and queue only for the tenant's own accounts and their commit.
  perform lock_account_rows(array(select (e->>'account_id')::uuid from jsonb_array_elements(p_items) e));

  for r in select e.item, e.ord from jsonb_array_elements(p_items) with ordinality e(item, ord) loop
    -- By the key paid, or, for an account of this platform, by its branch and number.
    v_trusted := is_trusted_contact((r.item->>'account_id')::uuid, r.item->>'pix_key',
      case when r.item->'beneficiary'->>'ispb' = platform_ispb() then r.item->'beneficiary'->>'branch' end,
      case when r.item->'beneficiary'->>'ispb' = platform_ispb() then r.item->'beneficiary'->>'account' end, now());
    if v_accepted ? (r.item->>'payout_id') then
      -- The same request twice in one batch: the second answers as the first (accepted, not recorded yet).
      return query select r.ord,
        case when v_accepted->(r.item->>'payout_id')->>'request_hash' <> r.item->>'request_hash' then 'IDEMPOTENCY_KEY_REUSED' else 'RECORDED' end,
        'PROCESSING', null::text, (v_accepted->(r.item->>'payout_id')->>'fee')::bigint, now(), null::jsonb, v_trusted;
      continue;
    end if;
    select * into d from debit_pix_payout_payer(
      r.item->>'payout_id', (r.item->>'tenant_id')::uuid, (r.item->>'account_id')::uuid, r.item->>'channel',
      (r.item->>'amount')::bigint, r.item->>'pix_key', r.item->>'pix_key_type', r.item->'beneficiary',
      nullif(r.item->'qr', 'null'::jsonb), r.item->>'description', r.item->>'idempotency_key', r.item->>'request_hash',
      array(select jsonb_array_elements_text(r.item->'ids')), coalesce((v_debited->>(r.item->>'account_id'))::bigint, 0));
    if d.debit is not null then
      v_debits := v_debits || jsonb_build_array(d.debit);
      v_debited := v_debited || jsonb_build_object(r.item->>'account_id',
        coalesce((v_debited->>(r.item->>'account_id'))::bigint, 0) + (d.debit->>'amount')::bigint + d.fee_cents);
      v_accepted := v_accepted || jsonb_build_object(r.item->>'payout_id', d.debit);
      -- The settlement workflow's hand-off, due at once: no request waits for Temporal, the reconciler starts it.
      if nullif(r.item->'handoff', 'null'::jsonb) is not null then v_handoffs := v_handoffs || jsonb_build_array(r.item->'handoff'); end if;
    end if;
    return query select r.ord, d.code, d.status, d.reason, d.fee_cents, d.created_at, d.details, v_trusted;
  end loop;

  -- The settlement workflows' hand-offs and the payouts first, the posting last: it locks the tenant's settlement
  -- account, which every batch of the tenant waits for, so nothing else is done under that lock but the posting and
  -- the commit. A payout's reference to its movement is checked at commit.
  if jsonb_array_length(v_handoffs) > 0 then perform record_workflow_starts(v_handoffs, true); end if;
  if jsonb_array_length(v_debits) > 0 then
    insert into pix_payout (id, tenant_id, account_id, channel, amount_cents, fee_cents, pix_key, pix_key_type, beneficiary, qr,
                            description, idempotency_key, request_hash, status, movement_id, limit_period, limit_period_of,
                            limit_month_of)
    select p.payout_id, p.tenant_id, p.account_id, p.channel, p.amount, p.fee, p.pix_key, p.pix_key_type, p.beneficiary,
           nullif(p.qr, 'null'::jsonb), p.description, p.idempotency_key, p.request_hash, 'PROCESSING', p.ids[1], p.limit_period,
           p.limit_period_of, p.limit_month_of
      from jsonb_to_recordset(v_debits) as p(payout_id text, tenant_id uuid, account_id uuid, channel text, amount bigint, fee bigint,
                                             pix_key text, pix_key_type text, beneficiary jsonb, qr jsonb, description text,
                                             idempotency_key text, request_hash text, ids text[], limit_period text,
                                             limit_period_of date, limit_month_of date);
    perform post_pix_debits(v_debits);
  end if;
end $$;
