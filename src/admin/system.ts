import { randomBytes } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from '../shared/zod.ts';
import { checkLedger } from '../ledger/consistency.ts';
import { pendingHandOffs, unsettledPayoutsByTenant } from '../pix/settlement-backlog.ts';
import { startWorkflow } from '../temporal/workflow-start.ts';
import { probeStart, type ProbeOutcome } from '../../workflows/contracts/probe.ts';
import { command, type AdminContext } from '../cli/command.ts';

/** What waits for settlement: payouts across the platform and per tenant, and hand-offs Temporal has not taken. */
async function settlementBacklog(em: EntityManager) {
  const [byTenant, handOffs] = [await unsettledPayoutsByTenant(em), await pendingHandOffs(em)];
  // Summed from the tenants' figures, read in the same statement, so the total is always the sum of its parts.
  const unsettled = byTenant.reduce((sum, t) => sum + t.unsettled, 0);
  // The tenants come the longest waiting first.
  const oldestAgeSeconds = byTenant[0]?.oldestAgeSeconds ?? null;
  return { pixPayouts: { unsettled, oldestAgeSeconds, byTenant }, handOffs };
}

async function runProbe({ config, temporal }: AdminContext, timeoutSeconds: number) {
  const { client } = await temporal();
  const started = Date.now();
  const probe = probeStart(started, randomBytes(4).toString('hex'), timeoutSeconds);
  await startWorkflow(client, config.TEMPORAL_TASK_QUEUE, probe);
  const result: ProbeOutcome = await client.workflow.getHandle(probe.workflowId).result();
  return { workflowId: probe.workflowId, databaseTime: result.databaseTime, elapsedMs: Date.now() - started };
}

export const systemCommands = {
  'system:check': command({
    summary: 'Run a probe workflow through the worker and the database, and show the settlement backlog',
    usage: '[--timeout-seconds 30]',
    flags: z.object({ 'timeout-seconds': z.coerce.number().int().min(1).max(600).default(30) }),
    async run(ctx, f) {
      // Read first: when the probe fails (no worker, Temporal away) is when the backlog matters most.
      const backlog = await settlementBacklog(ctx.em);
      try {
        return { status: 'ok', ...(await runProbe(ctx, f['timeout-seconds'])), backlog };
      } catch (err) {
        throw new Error(`${err instanceof Error ? err.message : String(err)}; settlement backlog: ${JSON.stringify(backlog)}`, { cause: err });
      }
    },
  }),
  'ledger:check': command({
    summary: "Check the ledger's invariants per tenant: its balances sum to zero, and each is the sum of its entries",
    usage: '[--tenant <tenantId>]',
    flags: z.object({ tenant: z.uuid().optional() }),
    async run({ em }, f) {
      const report = await checkLedger(em, f.tenant ?? null);
      if (report.inconsistent.length > 0) throw new Error(`ledger inconsistent: ${JSON.stringify(report)}`);
      return { status: 'consistent', ...report };
    },
  }),
};
