-- The callgrind load's requests (bench/callgrind/run.sh): `cg_batch`, 60 batches of 8 TEVs as the api's settlement
-- queue sends them to settle_tev_batch, between distinct funded holder accounts of the first `bench-tev` tenant (the
-- one bench/tev.ts or bench/ab/run.sh set up), each destination by branch and number as a client writes it. Fixed by
-- setseed, so that two trees' functions run the same requests.
select setseed(0.42);
create temporary table cg_account as
  select row_number() over (order by a.id) as k, a.id, a.agency, a.number, a.tenant_id
    from account a
   where a.kind = 'HOLDER' and a.balance_cents > 100000
     and a.tenant_id = (select t.id from tenant t where t.name like 'bench-tev %' order by t.created_at limit 1);
create table cg_batch (n integer primary key, items jsonb not null);
insert into cg_batch
select b, (select jsonb_agg(jsonb_build_object(
             'tev_id', substr(md5(random()::text || b || i), 1, 24), 'tenant_id', s.tenant_id, 'source_id', s.id,
             'destination_id', null, 'destination_branch', d.agency, 'destination_account', d.number,
             'amount', (1 + floor(random() * 500))::integer::text, 'description', null, 'external_ref', null,
             'end_to_end_id', gen_random_uuid()::text, 'idempotency_key', md5(random()::text), 'request_hash', md5(random()::text),
             'origin', 'INTEGRATION_API',
             'ids', (select jsonb_agg(substr(md5(random()::text || g || b || i), 1, 24)) from generate_series(1, 8) g)) order by i)
             from generate_series(1, 8) i
             join cg_account s on s.k = 1 + (b * 16 + 2 * i) % (select count(*) from cg_account)
             join cg_account d on d.k = 1 + (b * 16 + 2 * i + 1) % (select count(*) from cg_account))
  from generate_series(1, 60) b;
