import { allHandlersFinished, condition, defineUpdate, proxyLocalActivities, setHandler } from '@temporalio/workflow';
import type { FloorActivities } from './activities.ts';

/** Answered once the run did its one step: what an early return costs at the least. */
export const done = defineUpdate<string>('done');

const { nothing } = proxyLocalActivities<FloorActivities>({ startToCloseTimeout: '10 seconds' });

/** The Temporal floor: an empty workflow, started with Update-with-Start, one no-op local activity. */
export async function floorWorkflow(): Promise<string> {
  let result: string | undefined;
  setHandler(done, async () => {
    await condition(() => result !== undefined);
    return result!;
  });
  result = await nothing();
  await condition(allHandlersFinished);
  return result;
}
