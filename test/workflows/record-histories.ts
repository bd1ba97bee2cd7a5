/**
 * `node test/workflows/record-histories.ts`: runs every recorded scenario (scenarios/index.ts) on a fresh local
 * Temporal server, with the stub activities, and writes the history of each run it made to
 * test/workflows/histories/<scenario>.<workflowType>[.run<n>].json, which replay.test.ts replays against the current
 * workflow code.
 *
 * Record after adding a scenario or a workflow branch. A history is the proof that runs started by the code that
 * recorded it still replay: overwrite one only when no such run can still be open; otherwise keep it under another name.
 * pix-payout-before-continue-as-new.pixPayoutWorkflow.json.gz is such a history: a payout that polled 103 times in one
 * run, recorded by the code before continue-as-new (commit a60a22a), which the `pix-payout-continue-as-new` patch keeps
 * replaying. approval-rejected-before-checked-decisions.approvalWorkflow.json is another: a rejection closed by
 * `closeApproval` (commit 0132da0), before the `approval-follows-account` patch checked the decider in `rejectApproval`.
The payouts that polled (pix-payout-settles, -refunded, -failed, -rejected, -outlasts-runs, and
approval-executes-pix-payout-before-notifications) were recorded by the code before the debit moved into the request
(commit c2e38de): the `pix-payout-waits-for-notification` patch keeps them replaying, and no scenario records them now.
 *
 * `node test/workflows/record-histories.ts approval-cancelled pix-payout-`: only the scenarios whose names start with
 * one of the arguments, so that a new scenario is recorded without rewriting the others.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { recordedScenarios } from './scenarios/index.ts';
import { runHistories, startHarness } from './support/harness.ts';
import { historyToFile } from './support/history-files.ts';

const dir = fileURLToPath(new URL('./histories/', import.meta.url));
mkdirSync(dir, { recursive: true });
const only = process.argv.slice(2);
const chosen = Object.entries(recordedScenarios).filter(([scenario]) => only.length === 0 || only.some((prefix) => scenario.startsWith(prefix)));
const h = await startHarness();
try {
  await Promise.all(
    chosen.map(async ([scenario, run]) => {
      const { workflowIds } = await run(h);
      for (const workflowId of workflowIds) {
        const runs = await runHistories(h.client, workflowId);
        runs.forEach((history, i) => {
          const type = history.events![0]!.workflowExecutionStartedEventAttributes!.workflowType!.name!;
          const file = `${scenario}.${type}${runs.length > 1 ? `.run${i + 1}` : ''}.json`;
          writeFileSync(`${dir}${file}`, historyToFile(history));
          process.stdout.write(`${file}: ${history.events!.length} events\n`);
        });
      }
    }),
  );
} finally {
  await h.teardown();
}
