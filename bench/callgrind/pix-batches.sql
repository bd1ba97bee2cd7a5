-- The Pix callgrind load's requests (bench/callgrind/run.sh --pix): `cg_pix_batch`, 60 batches of 8 Pix debits by key as the
-- api's debit queue sends them to debit_pix_payout_batch, R$ 0.01 each from 8 distinct funded payers of the first
-- Pix tenant bench/pix.ts (`bench-pix …`) or bench/ab/run.sh (`bench-ab …`) set up, each with its settlement workflow's
-- hand-off. Fixed by setseed, so that two trees' functions run the same requests.
select setseed(0.42);
create temporary table cg_payer as
  select row_number() over (order by a.id) as k, a.id, a.tenant_id
    from account a
   where a.kind = 'HOLDER' and a.balance_cents > 1000000
     and a.tenant_id = (select t.id from tenant t where t.name like 'bench-pix %' or t.name like 'bench-ab %'
                         order by t.created_at limit 1);
create table cg_pix_batch (n integer primary key, items jsonb not null);
insert into cg_pix_batch
select b, (select jsonb_agg(jsonb_build_object(
             'payout_id', 'p' || substr(md5(random()::text || b || i), 1, 23), 'tenant_id', s.tenant_id, 'account_id', s.id,
             'channel', 'PIX_OUT', 'amount', '1', 'pix_key', gen_random_uuid()::text, 'pix_key_type', 'EVP',
             'beneficiary', jsonb_build_object('ispb', '99999999', 'name', 'Recebedor Sandbox 2872', 'branch', '0001', 'account', '56152742',
                                               'document', '***.524.028-**', 'accountType', 'CACC', 'institution', 'Banco Sandbox S.A.'),
             'qr', null, 'description', 'Pix enviado', 'idempotency_key', gen_random_uuid()::text, 'request_hash', md5(random()::text),
             'ids', (select jsonb_agg(substr(md5(random()::text || g || b || i), 1, 24)) from generate_series(1, 7) g),
             'handoff', jsonb_build_object('taskQueue', 'banking', 'workflowType', 'pixPayoutWorkflow',
                 'workflowId', 'pix-payout-x' || b || '-' || i,
                 'args', jsonb_build_array(jsonb_build_object('payoutId', 'x' || b || '-' || i, 'notificationWaitMs', 2000, 'longestWaitMs', 600000)),
                 'searchAttributes', jsonb_build_object('TenantId', s.tenant_id, 'AccountId', s.id, 'PayoutId', 'x' || b || '-' || i),
                 'reusePolicy', 'ALLOW_DUPLICATE_FAILED_ONLY'),
             'approval', 'ASK') order by i)
             from generate_series(1, 8) i
             join cg_payer s on s.k = 1 + (b * 8 + i) % (select count(*) from cg_payer))
  from generate_series(1, 60) b;
