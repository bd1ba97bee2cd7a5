import type { EntityManager } from '@mikro-orm/postgresql';

/**
 * The settlement backlog: what the platform has accepted and not settled yet. A Pix payment is debited when it is
 * accepted and settled later by its payout workflow, handed to Temporal through `workflow_start`; when acceptance
 * outruns settlement, or Temporal is away, the difference waits in these two places, and operators read it here.
 * Ages are measured by the database clock, the one that wrote `created_at`.
 */

/** Payouts accepted and not settled: REQUESTED (recorded, not debited yet) or PROCESSING (debited, not settled). */
export interface UnsettledPayouts {
  unsettled: number;
  /** null when nothing waits. */
  oldestAgeSeconds: number | null;
}

export interface TenantUnsettledPayouts extends UnsettledPayouts {
  tenantId: string;
  tenantName: string;
}

/** Hand-offs of one workflow type that Temporal has not taken yet. */
export interface PendingHandOffs {
  workflowType: string;
  pending: number;
  oldestAgeSeconds: number;
}

// The predicate is the one of pix_payout_unsettled_idx, word for word, so that the planner reads that index alone.
const UNSETTLED = `status in ('REQUESTED', 'PROCESSING')`;
const ageOfOldest = (column: string) => `round(extract(epoch from now() - min(${column}))::numeric, 3)::float8`;

export async function unsettledPayouts(em: EntityManager): Promise<UnsettledPayouts> {
  const [row] = await em.execute<{ unsettled: string; oldest_age_seconds: number | null }[]>(
    `select count(*) as unsettled, ${ageOfOldest('created_at')} as oldest_age_seconds from pix_payout where ${UNSETTLED}`,
  );
  return { unsettled: Number(row!.unsettled), oldestAgeSeconds: row!.oldest_age_seconds };
}

/** The tenants that have payouts waiting, the longest waiting first. */
export async function unsettledPayoutsByTenant(em: EntityManager): Promise<TenantUnsettledPayouts[]> {
  const rows = await em.execute<{ tenant_id: string; tenant_name: string; unsettled: string; oldest_age_seconds: number }[]>(
    `select w.tenant_id, t.name as tenant_name, w.unsettled, w.oldest_age_seconds
       from (select tenant_id, count(*) as unsettled, ${ageOfOldest('created_at')} as oldest_age_seconds
               from pix_payout where ${UNSETTLED} group by tenant_id) w
       join tenant t on t.id = w.tenant_id
      order by w.oldest_age_seconds desc, w.tenant_id`,
  );
  return rows.map((r) => ({ tenantId: r.tenant_id, tenantName: r.tenant_name, unsettled: Number(r.unsettled), oldestAgeSeconds: r.oldest_age_seconds }));
}

/**
 * Every row of `workflow_start` waits for Temporal (the row goes once Temporal has the workflow), so the table is as
 * large as this backlog and is read whole: an index would not make the count cheaper, and would cost every hand-off
 * (two writes per workflow start) an index entry to insert and remove.
 */
export async function pendingHandOffs(em: EntityManager): Promise<PendingHandOffs[]> {
  const rows = await em.execute<{ workflow_type: string; pending: string; oldest_age_seconds: number }[]>(
    `select workflow_type, count(*) as pending, ${ageOfOldest('created_at')} as oldest_age_seconds
       from workflow_start group by workflow_type order by workflow_type`,
  );
  return rows.map((r) => ({ workflowType: r.workflow_type, pending: Number(r.pending), oldestAgeSeconds: r.oldest_age_seconds }));
}
