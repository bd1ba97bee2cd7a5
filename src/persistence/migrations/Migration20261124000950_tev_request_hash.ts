import { Migration } from '@mikro-orm/migrations';

/**
 * A TEV's request hash is computed where every other request's is, by `requestHash` (src/shared/idempotency.ts), and
 * handed to `settle_tev`, which no longer hashes by its own formula. The hash covers the request as the client sent it:
 * the destination as given (an account id, or a branch and account number), the amount, the description and the
 * externalRef, as the compact JSON array `[id, branch, account, amount, description, externalRef]`.
 *
 * Recorded transfers get the new hash, so a retry after the upgrade still answers as the first request did. The old one
 * covered the destination's id as found, the amount, the description as sent (null when the client gave none; the
 * record keeps the default text instead) and the externalRef. Which description the client sent is told by which of the
 * two candidates gives the old hash. The destination as sent: by account id for an approved payment, by number for
 * the holder and integration APIs, written as the record keeps it (branch with its leading zeros, account without). A
 * client that wrote them otherwise gets 409 IDEMPOTENCY_KEY_REUSED if it retries a transfer recorded before the upgrade.
 *
 * Batches pass the hash too: `tev_batch_item` gains the field.
 */
export class Migration20261124000950_tev_request_hash extends Migration {
  override name = 'Migration20261124000950_tev_request_hash';

  override up(): void {
    this.addSql('alter type tev_batch_item add attribute request_hash text');
    this.addSql(`
      with old as (
        select t.id, t.request_hash,
               encode(sha256(convert_to(json_build_array(t.destination_account_id, t.amount_cents::text, null::text, t.external_ref)::text, 'UTF8')), 'hex')
                 as without_description,
               case when t.origin = 'APPROVAL' then t.destination_account_id::text end as destination_id,
               case when t.origin <> 'APPROVAL' then d.agency end as destination_branch,
               case when t.origin <> 'APPROVAL' then d.number end as destination_account,
               t.amount_cents::text as amount, t.description, t.external_ref
          from tev_transfer t
          join account d on d.id = t.destination_account_id
      ), fields as (
        select o.id,
               array[o.destination_id, o.destination_branch, o.destination_account, o.amount,
                     case when o.request_hash = o.without_description then null else o.description end, o.external_ref] as f
          from old o
      )
      update tev_transfer t
         set request_hash = encode(sha256(convert_to(
               '[' || (select string_agg(coalesce(to_json(x.v)::text, 'null'), ',' order by x.n) from unnest(fields.f) with ordinality x(v, n)) || ']',
               'UTF8')), 'hex')
        from fields
       where t.id = fields.id`);
  }

  override down(): void {
    throw new Error('Migration20261124000950_tev_request_hash cannot be undone: the old hashes are not kept');
  }
}
