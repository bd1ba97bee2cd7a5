/** Contract of the operators' probe workflow (`probe-<time>-<random>`): the admin command and the workflow import it. */
import type { WorkflowStart } from '../../src/temporal/workflow-start.ts';

export interface ProbeOutcome {
  /** The database's clock, as the worker's activity read it. */
  databaseTime: string;
}

/** A fresh run each time; it gives up after `timeoutSeconds` when no worker picks it up. */
export function probeStart(startedAtMs: number, nonce: string, timeoutSeconds: number): WorkflowStart {
  return {
    workflowType: 'probeWorkflow',
    workflowId: `probe-${startedAtMs}-${nonce}`,
    args: [],
    searchAttributes: {},
    reusePolicy: 'REJECT_DUPLICATE',
    executionTimeout: `${timeoutSeconds} seconds`,
  };
}
