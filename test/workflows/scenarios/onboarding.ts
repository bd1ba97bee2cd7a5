/** The onboarding workflow's paths through KYC, shared by its tests and the history recorder. */
import { randomUUID } from 'node:crypto';
import type { OnboardingActivities } from '../../../activities/onboarding.ts';
import { startWorkflow } from '../../../src/temporal/workflow-start.ts';
import { kycPageOpened, kycResultReceived, onboardingStart, onboardingState, type KycResult, type OnboardingState } from '../../../workflows/contracts/onboarding.ts';
import { waitFor } from '../../support/wait.ts';
import type { ScenarioRun, WorkflowHarness } from '../support/harness.ts';
import { ActivityLog } from '../support/stubs.ts';

export interface OnboardingRun extends ScenarioRun<OnboardingState> {
  holderId: string;
  /** What the `onboardingState` query answered along the way. */
  states: OnboardingState[];
}

/** `provisionAccount` answers once `provisioned` resolves (by default at once). */
function onboardingStubs(log: ActivityLog, provisioned: Promise<void> = Promise.resolve()): OnboardingActivities {
  return log.record<OnboardingActivities>({
    provisionAccount: async () => (await provisioned, randomUUID()),
    markOnboardingInProgress: async () => undefined,
    approveOnboarding: async () => undefined,
    rejectOnboarding: async () => undefined,
  });
}

/** Registration starts the run; the holder opens the KYC page, then the provider sends the decision. */
export async function kycThroughThePage(h: WorkflowHarness, decision: KycResult): Promise<OnboardingRun> {
  const log = new ActivityLog();
  return h.withWorker(onboardingStubs(log), async (taskQueue) => {
    const holder = { id: randomUUID(), tenantId: randomUUID() };
    const start = onboardingStart(holder);
    await startWorkflow(h.client, taskQueue, start);
    const handle = h.client.workflow.getHandle(start.workflowId);
    const states = [await waitFor(async () => log.calls.length > 0 && handle.query(onboardingState), 10_000, 'account provisioning')];
    await handle.signal(kycPageOpened);
    states.push(await waitFor(async () => (await handle.query(onboardingState)) === 'IN_PROGRESS' && 'IN_PROGRESS', 10_000, 'IN_PROGRESS'));
    await handle.signal(kycResultReceived, decision);
    const result = await handle.result();
    return { result, log, workflowIds: [start.workflowId], holderId: holder.id, states };
  });
}

/**
 * The decision arrives first and starts the run itself (signal-with-start); the later ones arrive while the account
 * is being provisioned (the run is still open).
 */
export async function kycResultFirst(h: WorkflowHarness, ...decisions: KycResult[]): Promise<OnboardingRun> {
  const log = new ActivityLog();
  let allSent!: () => void;
  const provisioned = new Promise<void>((resolve) => (allSent = resolve));
  return h.withWorker(onboardingStubs(log, provisioned), async (taskQueue) => {
    const holder = { id: randomUUID(), tenantId: randomUUID() };
    const [first, ...later] = decisions;
    const start = onboardingStart(holder, { name: kycResultReceived.name, args: [first] });
    await startWorkflow(h.client, taskQueue, start);
    const handle = h.client.workflow.getHandle(start.workflowId);
    for (const decision of later) await handle.signal(kycResultReceived, decision);
    allSent();
    const result = await handle.result();
    return { result, log, workflowIds: [start.workflowId], holderId: holder.id, states: [] };
  });
}
