import { Migration } from '@mikro-orm/migrations';

/**
 * A TEV settles in one round trip: `settle_tev` records the transfer with its idempotency key and request hash,
 * locks the accounts in id order, applies every rule, and writes movements, entries, balances, fee revenue, the
 * outbox events and the resolution in the caller's single statement (one transaction).
 */
export class Migration20261122001000_tev_settlement extends Migration {
  override name = 'Migration20261122001000_tev_settlement';

  override up(): void {
    // The one rule for "may this account move money" (send or receive), used by every posting.
    this.addSql(`
      create function account_may_move_money(account_status text, holder_status text, onboarding_step text) returns boolean
      language sql immutable parallel safe as $$
        select account_status = 'APPROVED' and holder_status = 'ACTIVE' and onboarding_step = 'DONE'
      $$`);

    // The tenant's fee revenue account, created on first use (a concurrent creator makes this one wait, then reuse it).
    this.addSql(`
      create function tenant_fee_revenue_account(p_tenant_id uuid) returns uuid
      language plpgsql as $$
      declare v_id uuid;
      begin
        select id into v_id from account where tenant_id = p_tenant_id and kind = 'FEE_REVENUE';
        if found then return v_id; end if;
        insert into account (id, tenant_id, holder_id, kind, bank, agency, number, pix_account_id, core_account_id, status)
        values (gen_random_uuid(), p_tenant_id, null, 'FEE_REVENUE', '000', '0000', nextval('account_number_seq')::text,
                'c' || substr(md5(gen_random_uuid()::text), 1, 23), 'c' || substr(md5(gen_random_uuid()::text), 1, 23), 'APPROVED')
        on conflict (tenant_id) where kind = 'FEE_REVENUE' do nothing;
        select id into v_id from account where tenant_id = p_tenant_id and kind = 'FEE_REVENUE';
        return v_id;
      end $$`);

    this.addSql(`
      create function settle_tev(
        p_mode text,                -- SUBMIT: checks, then settle | HOLD: checks, then record PROCESSING and hand off
                                    -- RESOLVE: settle without the request-time checks | FAIL: resolve FAILED with p_fail_reason
        p_tev_id text,
        p_tenant_id uuid,
        p_source_id uuid,
        p_destination_id uuid,      -- or the branch and account below
        p_destination_branch text,
        p_destination_account text,
        p_amount bigint,
        p_description text,
        p_external_ref text,
        p_end_to_end_id text,
        p_idempotency_key text,
        p_origin text,
        p_max_amount bigint,
        p_ids text[],               -- cuid2 ids made by the caller: 3 movements, then 5 entries
        p_handoff jsonb,            -- HOLD: the workflow_start row that hands the transfer to its workflow
        p_fail_reason text
      ) returns table (code text, tev_id text, status text, reason text, amount_cents bigint, fee_out_cents bigint,
                       resolved_at timestamptz, destination_id uuid)
      language plpgsql
      set timezone = 'America/Sao_Paulo'
      as $$
      #variable_conflict use_column
      declare
        v_tev tev_transfer;
        v_src record;
        v_dst record;
        v_dst_id uuid;
        v_approver uuid;
        v_hash text;
        v_fee_out bigint;
        v_fee_in bigint;
        v_revenue_id uuid;
        v_reason text;
        v_now timestamptz;
        v_description text;
        v_src_balance bigint;
        v_dst_balance bigint;
        v_rev_balance bigint;
        v_when jsonb;
        v_event jsonb;
      begin
        tev_id := p_tev_id;
        -- A retried request: its stored outcome (the key with another request is a conflict).
        select * into v_tev from tev_transfer t where t.id = p_tev_id;

        if v_tev.id is null and p_mode in ('SUBMIT', 'HOLD') then
          select a.id, a.status, a.approver_holder_id, h.status as holder_status, h.onboarding_step
            into v_src from account a join holder h on h.id = a.holder_id
           where a.id = p_source_id and a.tenant_id = p_tenant_id and a.kind = 'HOLDER';
          code := case
            when v_src.id is null then 'SOURCE_NOT_FOUND'
            when v_src.holder_status in ('BLOCKED', 'CLOSED') then 'HOLDER_BLOCKED'
            when v_src.holder_status <> 'ACTIVE' or v_src.onboarding_step <> 'DONE' then 'ONBOARDING_INCOMPLETE'
            when v_src.status <> 'APPROVED' then 'ACCOUNT_NOT_APPROVED'
          end;
          if code is not null then return next; return; end if;
          v_approver := v_src.approver_holder_id;
        end if;

        -- The destination this request names (a retry naming another one is another request).
        if p_destination_id is not null then
          select a.id into v_dst_id from account a where a.id = p_destination_id and a.tenant_id = p_tenant_id and a.kind = 'HOLDER';
        else
          select a.id into v_dst_id from account a
           where a.tenant_id = p_tenant_id and a.kind = 'HOLDER'
             and a.agency = lpad(coalesce(nullif(ltrim(p_destination_branch, '0'), ''), '0'), 4, '0')
             and a.number = ltrim(p_destination_account, '0');
        end if;
        destination_id := v_dst_id;
        code := case
          when v_dst_id is null then 'DESTINATION_NOT_FOUND'
          when v_dst_id = p_source_id then 'SAME_ACCOUNT'
          when v_approver is not null then 'APPROVAL_REQUIRED'
        end;
        if code is not null then return next; return; end if;

        v_hash := encode(sha256(convert_to(json_build_array(v_dst_id, p_amount::text, p_description, p_external_ref)::text, 'UTF8')), 'hex');

        if v_tev.id is null then
          -- Two identical requests racing: the second waits for the first to commit, inserts nothing and reads it.
          insert into tev_transfer (id, tenant_id, source_account_id, destination_account_id, amount_cents, description, external_ref,
                                    end_to_end_id, idempotency_key, request_hash, origin, status)
          values (p_tev_id, p_tenant_id, p_source_id, v_dst_id, p_amount, p_description, p_external_ref,
                  p_end_to_end_id, p_idempotency_key, v_hash, p_origin, 'PROCESSING')
          on conflict do nothing;
          if not found then
            select * into v_tev from tev_transfer t where t.id = p_tev_id;
            -- Not this request's record: the conflict was another transfer's externalRef.
            if v_tev.id is null then code := 'EXTERNAL_REF_TAKEN'; return next; return; end if;
          else
            select * into v_tev from tev_transfer t where t.id = p_tev_id;
          end if;
        end if;

        if v_tev.request_hash <> v_hash then
          code := 'IDEMPOTENCY_KEY_REUSED'; return next; return;
        end if;

        if v_tev.status = 'PROCESSING' and p_mode = 'HOLD' then
          if p_handoff is not null then
            insert into workflow_start (key, task_queue, workflow_type, workflow_id, args, search_attributes, reuse_policy)
            values (p_handoff->>'workflowId', p_handoff->>'taskQueue', p_handoff->>'workflowType', p_handoff->>'workflowId',
                    p_handoff->'args', p_handoff->'searchAttributes', p_handoff->>'reusePolicy')
            on conflict (key) do nothing;
          end if;
          return query select 'PROCESSING', v_tev.id, v_tev.status, v_tev.reason, v_tev.amount_cents, v_tev.fee_out_cents, v_tev.resolved_at, v_tev.destination_account_id;
          return;
        end if;

        if v_tev.status = 'PROCESSING' then
          -- Whoever settles holds the transfer: a concurrent settler (the resolution workflow) waits, then reads.
          select * into v_tev from tev_transfer t where t.id = p_tev_id for update;
        end if;
        if v_tev.status <> 'PROCESSING' then
          return query select v_tev.status, v_tev.id, v_tev.status, v_tev.reason, v_tev.amount_cents,
                              case when v_tev.status = 'DONE' then coalesce(v_tev.fee_out_cents, 0) else 0 end, v_tev.resolved_at, v_tev.destination_account_id;
          return;
        end if;

        -- Fees: the account's own value, else its tenant's, else 0.
        select coalesce(own.tev_out_cents, ten.tev_out_cents, 0) into v_fee_out
          from account a left join fee_schedule own on own.account_id = a.id
          left join fee_schedule ten on ten.tenant_id = a.tenant_id and ten.account_id is null
         where a.id = v_tev.source_account_id;
        select coalesce(own.tev_in_cents, ten.tev_in_cents, 0) into v_fee_in
          from account a left join fee_schedule own on own.account_id = a.id
          left join fee_schedule ten on ten.tenant_id = a.tenant_id and ten.account_id is null
         where a.id = v_tev.destination_account_id;
        -- The revenue row is locked (a row every transfer of the tenant would queue on) only when there is a fee.
        if v_fee_out + v_fee_in > 0 then v_revenue_id := tenant_fee_revenue_account(v_tev.tenant_id); end if;

        -- Locks in id order, so transfers touching the same accounts in any direction queue instead of deadlocking.
        perform 1 from account a where a.id in (v_tev.source_account_id, v_tev.destination_account_id, v_revenue_id)
          order by a.id for no key update;
        select a.id, a.balance_cents, a.agency, a.number, a.pix_account_id, h.name, h.document,
               account_may_move_money(a.status, h.status, h.onboarding_step) as may_move
          into v_src from account a join holder h on h.id = a.holder_id where a.id = v_tev.source_account_id;
        select a.id, a.balance_cents, a.agency, a.number, a.pix_account_id, h.name, h.document,
               account_may_move_money(a.status, h.status, h.onboarding_step) as may_move
          into v_dst from account a join holder h on h.id = a.holder_id where a.id = v_tev.destination_account_id;

        v_description := coalesce(v_tev.description, 'Transferência para ' || v_dst.name);
        v_reason := case
          when p_mode = 'FAIL' then p_fail_reason
          when not v_src.may_move then 'SOURCE_NOT_ACTIVE'
          when not v_dst.may_move then 'DESTINATION_NOT_ACTIVE'
          when v_tev.amount_cents > p_max_amount then 'AMOUNT_ABOVE_LIMIT'
          when v_tev.amount_cents <= v_fee_in then 'AMOUNT_BELOW_RECEIVE_FEE'
          when v_src.balance_cents < v_tev.amount_cents + v_fee_out then 'INSUFFICIENT_BALANCE'
        end;
        v_now := clock_timestamp();
        v_event := jsonb_build_object(
          'tevTransferId', v_tev.id, 'endToEndId', v_tev.end_to_end_id, 'amountCents', v_tev.amount_cents::text,
          'externalRef', v_tev.external_ref, 'description', v_description,
          'payerAccount', v_src.number, 'payerBranch', v_src.agency, 'beneficiaryAccount', v_dst.number, 'beneficiaryBranch', v_dst.agency,
          'occurredAt', to_char(v_now at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'));

        if v_reason is not null then
          update tev_transfer t set status = 'FAILED', reason = v_reason, fee_out_cents = v_fee_out, fee_in_cents = v_fee_in,
                 description = v_description, resolved_at = now()
           where t.id = v_tev.id returning * into v_tev;
          insert into event_outbox (id, tenant_id, account_id, pix_account_id, type, data)
          values (gen_random_uuid(), v_tev.tenant_id, v_src.id, v_src.pix_account_id, 'tev.out.failed',
                  v_event || jsonb_build_object('movementId', null, 'feeCents', v_fee_out::text, 'reason', v_reason));
          return query select 'FAILED', v_tev.id, v_tev.status, v_tev.reason, v_tev.amount_cents, 0::bigint, v_tev.resolved_at, v_tev.destination_account_id;
          return;
        end if;

        -- 'date' is when the transfer was submitted; 'paymentDate' when it settled (America/Sao_Paulo).
        v_when := jsonb_build_object('date', to_char(v_tev.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
                                     'endToEndId', v_tev.end_to_end_id, 'paymentDate', to_char(v_now, 'YYYY-MM-DD HH24:MI:SSTZH:TZM'));
        v_src_balance := v_src.balance_cents - v_tev.amount_cents - v_fee_out;
        v_dst_balance := v_dst.balance_cents + v_tev.amount_cents - v_fee_in;

        insert into movement (id, statement_id, tenant_id, account_id, operation_id, source, channel, direction, status, payout_status,
                              status_external, amount_cents, fee_cents, balance_after_cents, description, external_ref, end_to_end_id,
                              reverses_movement_id, metadata, created_at)
        values
          (p_ids[1], gen_random_uuid(), v_tev.tenant_id, v_src.id, v_tev.id, 'TEF_OUT', 'TEF', 'DEBIT', 'DONE', 'POSTED', 'SUCCESS',
           v_tev.amount_cents, v_fee_out, v_src_balance, v_description, v_tev.external_ref, v_tev.end_to_end_id, null,
           v_when || jsonb_build_object(
             'payer', jsonb_build_object('branch', v_src.agency, 'account', v_src.number),
             'beneficiary', jsonb_build_object('ispb', '00000000', 'name', v_dst.name, 'branch', v_dst.agency, 'account', v_dst.number,
                                               'document', v_dst.document, 'accountType', 'CACC', 'branchDigit', null, 'accountModel', 'INTERNAL')),
           v_now),
          (p_ids[2], gen_random_uuid(), v_tev.tenant_id, v_dst.id, v_tev.id, 'TEF_IN', 'TEF', 'CREDIT', 'DONE', null, 'SUCCESS',
           v_tev.amount_cents, v_fee_in, v_dst_balance, v_description, v_tev.external_ref, v_tev.end_to_end_id, null,
           v_when || jsonb_build_object(
             'payer', jsonb_build_object('ispb', '00000000', 'name', v_src.name, 'branch', v_src.agency, 'account', v_src.number, 'document', v_src.document),
             'beneficiary', jsonb_build_object('branch', v_dst.agency, 'account', v_dst.number)),
           v_now);

        insert into ledger_entry (id, movement_id, account_id, line, kind, amount_cents, balance_after_cents, created_at)
        values (p_ids[4], p_ids[1], v_src.id, 1, 'PRIMARY', -v_tev.amount_cents, v_src.balance_cents - v_tev.amount_cents, v_now),
               (p_ids[5], p_ids[2], v_dst.id, 1, 'PRIMARY', v_tev.amount_cents, v_dst.balance_cents + v_tev.amount_cents, v_now);
        if v_fee_out > 0 then
          insert into ledger_entry (id, movement_id, account_id, line, kind, amount_cents, balance_after_cents, created_at)
          values (p_ids[6], p_ids[1], v_src.id, 2, 'FEE', -v_fee_out, v_src_balance, v_now);
        end if;
        if v_fee_in > 0 then
          insert into ledger_entry (id, movement_id, account_id, line, kind, amount_cents, balance_after_cents, created_at)
          values (p_ids[7], p_ids[2], v_dst.id, 2, 'FEE', -v_fee_in, v_dst_balance, v_now);
        end if;
        update account set balance_cents = v_src_balance where id = v_src.id;
        update account set balance_cents = v_dst_balance where id = v_dst.id;

        if v_revenue_id is not null then
          -- The platform's side of the double entry: both fees of the transfer, in one credit.
          update account set balance_cents = balance_cents + v_fee_out + v_fee_in where id = v_revenue_id returning balance_cents into v_rev_balance;
          insert into movement (id, statement_id, tenant_id, account_id, operation_id, source, channel, direction, status, payout_status,
                                status_external, amount_cents, fee_cents, balance_after_cents, description, external_ref, end_to_end_id,
                                reverses_movement_id, metadata, created_at)
          values (p_ids[3], gen_random_uuid(), v_tev.tenant_id, v_revenue_id, v_tev.id, 'FEE_REVENUE', 'TEF', 'CREDIT', 'DONE', null, 'SUCCESS',
                  v_fee_out + v_fee_in, 0, v_rev_balance, 'Tarifas TEV ' || v_tev.id, v_tev.external_ref, v_tev.end_to_end_id, null, '{}', v_now);
          insert into ledger_entry (id, movement_id, account_id, line, kind, amount_cents, balance_after_cents, created_at)
          values (p_ids[8], p_ids[3], v_revenue_id, 1, 'FEE', v_fee_out + v_fee_in, v_rev_balance, v_now);
        end if;

        update tev_transfer t set status = 'DONE', fee_out_cents = v_fee_out, fee_in_cents = v_fee_in, description = v_description,
               source_movement_id = p_ids[1], destination_movement_id = p_ids[2], resolved_at = now()
         where t.id = v_tev.id returning * into v_tev;
        insert into event_outbox (id, tenant_id, account_id, pix_account_id, type, data)
        values (gen_random_uuid(), v_tev.tenant_id, v_src.id, v_src.pix_account_id, 'tev.out.succeeded',
                v_event || jsonb_build_object('movementId', p_ids[1], 'feeCents', v_fee_out::text)),
               (gen_random_uuid(), v_tev.tenant_id, v_dst.id, v_dst.pix_account_id, 'tev.in.received',
                v_event || jsonb_build_object('movementId', p_ids[2], 'feeCents', v_fee_in::text));
        return query select 'DONE', v_tev.id, v_tev.status, v_tev.reason, v_tev.amount_cents, v_fee_out, v_tev.resolved_at, v_tev.destination_account_id;
      end $$`);
  }

  override down(): void {
    this.addSql('drop function settle_tev');
    this.addSql('drop function tenant_fee_revenue_account');
    this.addSql('drop function account_may_move_money');
  }
}
