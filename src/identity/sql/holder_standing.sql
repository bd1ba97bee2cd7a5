-- Every api instance keeps the holders that tokens name, with their accounts' standing, between requests
-- (src/tenants/credential-cache.ts). It forgets one when the database says it changed: any change of a holder (its
-- status, onboarding, PIN, anything a request reads of it) or of its account's status or owner, whatever code made
-- it, notifies `credential_revoked` with `hld:<holder id>` at commit. A PIN attempt counted alone does not: no request
-- reads the count from the holder it authenticated with (the PIN check reads and counts in one statement).
create or replace function notify_holder_changed() returns trigger language plpgsql as $$
begin
  -- Apart: a statement names the fields of its own table only.
  if tg_table_name = 'holder' then
    perform pg_notify('credential_revoked', 'hld:' || old.id::text);
  else
    perform pg_notify('credential_revoked', 'hld:' || old.holder_id::text);
  end if;
  return null;
end $$;

create or replace trigger holder_changed after update on holder for each row
  when ((to_jsonb(old) - 'pin_failed_attempts') is distinct from (to_jsonb(new) - 'pin_failed_attempts'))
  execute function notify_holder_changed();

create or replace trigger holder_deleted after delete on holder for each row execute function notify_holder_changed();

-- A balance's change, which every posting makes, notifies nothing: the standing kept is the account's status, owner
-- and tenant, not its balance. Nor does a change of its approver: the debit reads that on the row it locks.
create or replace trigger account_standing_changed after update on account for each row
  when (old.holder_id is not null
        and (old.status, old.holder_id, old.tenant_id) is distinct from (new.status, new.holder_id, new.tenant_id))
  execute function notify_holder_changed();

create or replace trigger account_deleted after delete on account for each row
  when (old.holder_id is not null) execute function notify_holder_changed();
