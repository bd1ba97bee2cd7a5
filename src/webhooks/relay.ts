import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import type { Orm } from '../persistence/orm.ts';
import { hasCommittedEventsAfterCursor, takeCommittedEvents } from '../events/outbox.ts';
import { insertHandOffs } from '../handoff/store.ts';
import { startPollLoop, type PollLoop } from '../shared/poll-loop.ts';
import { webhookEndpointWake } from '../../workflows/contracts/webhook-endpoint.ts';
import { createDeliveries } from './delivery-store.ts';

const BATCH = 500;
/** Committed events wait at most this long: a look is one index range scan past the cursor. */
const SWEEP_MS = 100;

export type Relay = PollLoop;

/**
 * Moves committed events from the outbox to deliveries: one delivery row per (event, subscribed endpoint), due at
 * once, and in the same transaction one wake per endpoint touched (the hand-off of a signal-with-start to the
 * endpoint's workflow), which this worker's reconciler sends at once. It follows
 * the event log with a cursor (migrations 1100 and 1700), which one relay at a time holds, so several workers may run
 * it; a long transaction elsewhere in the server holds back none of the events committed after it began. It
 * polls: a NOTIFY from every posting would serialise all committing transactions on one lock. After a look that found
 * nothing it first asks whether there is anything to move (one statement, no transaction): an idle worker's relay
 * then costs ten statements a second instead of ten transactions.
 */
export function startOutboxRelay(orm: Orm, config: Config, logger: Logger, startsRecorded: () => void): Relay {
  let foundLastTime = true;

  async function fanOut(): Promise<number> {
    if (!foundLastTime && !(await hasCommittedEventsAfterCursor(orm.em.fork(), 'webhooks'))) return 0;
    const relayed = await orm.em.fork().transactional(async (em) => {
      // One relay moves the cursor at a time; the others find it locked and wait for their next look.
      const events = await takeCommittedEvents(em, 'webhooks', BATCH);
      if (!events || events.length === 0) return 0;
      const endpoints = await createDeliveries(em, events.map((e) => e.id));
      // One wake per endpoint and batch of events, not one per event.
      await insertHandOffs(
        em,
        config.TEMPORAL_TASK_QUEUE,
        endpoints.map((endpoint) => webhookEndpointWake(endpoint)),
        { dueNow: true },
      );
      return events.length;
    });
    foundLastTime = relayed > 0;
    if (relayed > 0) startsRecorded();
    return relayed;
  }

  // Only a full look is followed by another at once: under load the relay looks every SWEEP_MS and takes what committed
  // meanwhile, instead of one transaction after another for a few events each (at 2,000 TEVs a second that was a tenth
  // of a core of PostgreSQL and of the worker, bench/README.md).
  return startPollLoop(SWEEP_MS, async () => (await fanOut()) >= BATCH, (err) => logger.error({ err }, 'outbox relay failed; retrying'));
}
