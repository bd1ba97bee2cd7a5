import { gauge } from '../http/metrics.ts';
import type { PlatformContext } from '../platform-context.ts';
import { pendingHandOffs, unsettledPayouts } from '../pix/settlement-backlog.ts';
import { within } from '../shared/time.ts';

const METRICS_DEADLINE_MS = 2000;

/**
 * The settlement backlog as figures for monitoring. Served without authentication, so platform-wide only: no tenant
 * appears in it (per-tenant figures are for operators, in `system:check`). A workflow type with nothing waiting has
 * no sample.
 */
export function settlementMetrics({ orm }: PlatformContext): () => Promise<string> {
  return async () => {
    const em = orm.em.fork();
    const [payouts, handOffs] = await within(Promise.all([unsettledPayouts(em), pendingHandOffs(em)]), METRICS_DEADLINE_MS, 'PostgreSQL does not answer');
    const byType = (value: (h: (typeof handOffs)[number]) => number) => handOffs.map((h) => ({ labels: { workflow_type: h.workflowType }, value: value(h) }));
    return `${[
      gauge('pix_payouts_unsettled', 'Pix payouts accepted and not settled yet (REQUESTED or PROCESSING).', [{ value: payouts.unsettled }]),
      gauge('pix_payouts_unsettled_oldest_age_seconds', 'Age of the oldest unsettled Pix payout; 0 when none waits.', [{ value: payouts.oldestAgeSeconds ?? 0 }]),
      gauge('workflow_handoffs_pending', 'Workflow hand-offs (workflow_start) Temporal has not taken yet.', byType((h) => h.pending)),
      gauge('workflow_handoffs_oldest_age_seconds', 'Age of the oldest workflow hand-off Temporal has not taken yet.', byType((h) => h.oldestAgeSeconds)),
    ].join('\n')}\n`;
  };
}
