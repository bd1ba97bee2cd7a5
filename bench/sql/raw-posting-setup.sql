-- The raw double-entry baseline: the same posting as a TEV, on tables of its own, with nothing else.
drop table if exists bench_raw_entry, bench_raw_transfer, bench_raw_account;
create table bench_raw_account (id bigint primary key, balance_cents bigint not null check (balance_cents >= 0));
create table bench_raw_transfer (
  id bigserial primary key,
  idempotency_key text not null unique,
  source_id bigint not null references bench_raw_account (id),
  destination_id bigint not null references bench_raw_account (id),
  amount_cents bigint not null,
  created_at timestamptz not null default now());
create table bench_raw_entry (
  id bigserial primary key,
  transfer_id bigint not null references bench_raw_transfer (id),
  account_id bigint not null references bench_raw_account (id),
  amount_cents bigint not null,
  balance_after_cents bigint not null);
insert into bench_raw_account select n, 1000000000 from generate_series(1, :accounts) n;
