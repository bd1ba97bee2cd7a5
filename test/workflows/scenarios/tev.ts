/** The TEV resolution workflow's branches, shared by its tests and the history recorder. */
import { randomUUID } from 'node:crypto';
import type { TevActivities } from '../../../activities/tev.ts';
import { startWorkflow } from '../../../src/temporal/workflow-start.ts';
import { tevResolutionStart, type SandboxTevOutcome, type TevOutcome, type TevResolutionInput, type TevSubmission } from '../../../workflows/contracts/tev.ts';
import type { ScenarioRun, WorkflowHarness } from '../support/harness.ts';
import { ActivityLog } from '../support/stubs.ts';

export function submission(): TevSubmission {
  const tevId = `t${randomUUID()}`;
  return {
    tevId,
    tenantId: randomUUID(),
    sourceAccountId: randomUUID(),
    destination: { branch: '0001', account: '100042' },
    amountCents: '1097',
    description: null,
    externalRef: null,
    endToEndId: randomUUID(),
    idempotencyKey: randomUUID(),
    origin: 'INTEGRATION_API',
  };
}

/** Settles as the sandbox asked (DONE unless told FAILED), with a R$ 0,50 fee when it is DONE. */
export async function resolvedAs(input: TevResolutionInput): Promise<TevOutcome> {
  const failed = input.sandbox?.outcome === 'FAILED';
  return {
    tevId: input.submission.tevId,
    status: failed ? 'FAILED' : 'DONE',
    amountCents: input.submission.amountCents,
    feeCents: failed ? '0' : '50',
    reason: failed ? 'SANDBOX_FAILURE' : null,
    resolvedAt: '2026-01-02T12:00:00.000Z',
  };
}

export interface TevRun extends ScenarioRun<TevOutcome> {
  input: TevResolutionInput;
  startedAt: number;
}

/** Starts the resolution as the hand-off does and awaits it; `resolveTev` defaults to settling as asked. */
export async function resolveTransfer(h: WorkflowHarness, sandbox: SandboxTevOutcome | null, resolveTev: TevActivities['resolveTev'] = resolvedAs): Promise<TevRun> {
  const log = new ActivityLog();
  return h.withWorker(log.record<TevActivities>({ resolveTev }), async (taskQueue) => {
    const input: TevResolutionInput = { submission: submission(), sandbox };
    const start = tevResolutionStart(input);
    const startedAt = Date.now();
    await startWorkflow(h.client, taskQueue, start);
    const result = await h.client.workflow.getHandle(start.workflowId).result();
    return { result, log, workflowIds: [start.workflowId], input, startedAt };
  });
}

export const sandboxDone = (h: WorkflowHarness) => resolveTransfer(h, { delayMs: 1_000, outcome: 'DONE' });
export const sandboxFailed = (h: WorkflowHarness) => resolveTransfer(h, { delayMs: 1_000, outcome: 'FAILED' });
export const outcomeUnknown = (h: WorkflowHarness) => resolveTransfer(h, null);
