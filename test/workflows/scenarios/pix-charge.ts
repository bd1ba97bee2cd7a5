/** The charge workflows (expiry: its two endings; a refund's devolução), shared by their tests and the history recorder. */
import { randomUUID } from 'node:crypto';
import type { PixChargeActivities } from '../../../activities/pix-charges.ts';
import { startWorkflow } from '../../../src/temporal/workflow-start.ts';
import { chargePaid, pixChargeRefundStart, pixChargeStart, type ChargeStatus } from '../../../workflows/contracts/pix-charge.ts';
import type { ScenarioRun, WorkflowHarness } from '../support/harness.ts';
import { ActivityLog } from '../support/stubs.ts';

export interface ChargeRun extends ScenarioRun<ChargeStatus> {
  chargeId: string;
  expiresAt: string;
  endedAt: number;
}

/** A charge expiring `expiresInMs` from now, paid (the api's signal) after `paidAfterMs` when given. */
async function chargeLifetime(h: WorkflowHarness, expiresInMs: number, paidAfterMs: number | null): Promise<ChargeRun> {
  const log = new ActivityLog();
  const stubs = log.record<PixChargeActivities>({ expirePixCharge: async () => 'EXPIRED', sendPixChargeRefund: async () => undefined });
  return h.withWorker(stubs, async (taskQueue) => {
    const chargeId = randomUUID();
    const expiresAt = new Date(Date.now() + expiresInMs).toISOString();
    const start = pixChargeStart({ chargeId, tenantId: randomUUID(), accountId: randomUUID(), expiresAt });
    await startWorkflow(h.client, taskQueue, start);
    const handle = h.client.workflow.getHandle(start.workflowId);
    if (paidAfterMs !== null) {
      await new Promise((resolve) => setTimeout(resolve, paidAfterMs));
      await handle.signal(chargePaid);
    }
    const result = await handle.result();
    return { result, log, workflowIds: [start.workflowId], chargeId, expiresAt, endedAt: Date.now() };
  });
}

export const chargeExpires = (h: WorkflowHarness) => chargeLifetime(h, 2_000, null);
/** Paid a moment after creation; its expiry is an hour away. */
export const chargePaidEarly = (h: WorkflowHarness) => chargeLifetime(h, 3_600_000, 200);

export interface RefundRun extends ScenarioRun<string> {
  refundId: string;
}

/** A refund's devolução: the provider is unreachable at first (the send fails once), then takes it. */
export async function refundSent(h: WorkflowHarness): Promise<RefundRun> {
  const log = new ActivityLog();
  let attempts = 0;
  const stubs = log.record<PixChargeActivities>({
    expirePixCharge: async () => 'EXPIRED',
    sendPixChargeRefund: async () => {
      if (++attempts === 1) throw new Error('provider unreachable');
    },
  });
  return h.withWorker(stubs, async (taskQueue) => {
    const refundId = randomUUID();
    const start = pixChargeRefundStart({ refundId, chargeId: randomUUID(), tenantId: randomUUID(), accountId: randomUUID() });
    await startWorkflow(h.client, taskQueue, start);
    const result = await h.client.workflow.getHandle(start.workflowId).result();
    return { result, log, workflowIds: [start.workflowId], refundId };
  });
}
