-- One transfer: lock both accounts in id order, check the balance, update both, insert the transfer and two entries.
\set src random(1, :accounts)
\set dst 1 + (:src - 1 + random(1, :accounts - 1)) % :accounts
\set amount random(1, 1000)
begin;
select id, balance_cents from bench_raw_account where id in (:src, :dst) order by id for no key update;
update bench_raw_account set balance_cents = balance_cents - :amount where id = :src and balance_cents >= :amount;
update bench_raw_account set balance_cents = balance_cents + :amount where id = :dst;
with t as (insert into bench_raw_transfer (idempotency_key, source_id, destination_id, amount_cents)
           values (md5(random()::text), :src, :dst, :amount) returning id)
insert into bench_raw_entry (transfer_id, account_id, amount_cents, balance_after_cents)
select t.id, a.id, case when a.id = :src then -:amount else :amount end, a.balance_cents from t, bench_raw_account a where a.id in (:src, :dst);
commit;
