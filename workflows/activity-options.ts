import type { ActivityOptions, LocalActivityOptions } from '@temporalio/workflow';

/**
 * Activity options, defined once. Every activity here is idempotent (it reads the database state it changes), so
 * each is retried until the database answers; a short timeout means an activity lost with a killed worker is retried
 * on another within seconds.
 */
const RETRY_UNTIL_THE_DATABASE_ANSWERS = { initialInterval: '500 milliseconds', backoffCoefficient: 2, maximumInterval: '30 seconds' } as const;

/** A database step: one or a few transactions. 15 s also covers a database that pauses for 10 s. */
export const DATABASE_STEP: ActivityOptions = { startToCloseTimeout: '15 seconds', retry: RETRY_UNTIL_THE_DATABASE_ANSWERS };

/**
 * A payment made through the request path's use cases (a scheduled occurrence): the Pix key's lookup at the provider
 * (its adapter retries within its own timeout), then the posting, which answers within TEV_RESPONSE_DEADLINE_MS.
 * Idempotent by the occurrence's key, so an attempt that outlives its timeout and its retry pay once.
 */
export const PAYMENT_STEP: ActivityOptions = { startToCloseTimeout: '30 seconds', retry: RETRY_UNTIL_THE_DATABASE_ANSWERS };

/** A database step run in the worker that holds the workflow task, for an early return to a waiting caller. */
export const LOCAL_DATABASE_STEP: LocalActivityOptions = { startToCloseTimeout: '15 seconds', retry: RETRY_UNTIL_THE_DATABASE_ANSWERS };

/** A call to the Pix provider (submit, query): its adapter answers within its own timeout. */
export const PROVIDER_CALL: ActivityOptions = { startToCloseTimeout: '15 seconds', retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' } };

/**
 * A provider call run in the worker that holds the workflow task (a payout's submission): no activity task travels
 * through the Temporal server, which is what bounds how many payouts a second settle. Retried the same way; past a
 * minute of failures the retries wait on durable timers, so a provider that is down delays the payout, never loses it.
 */
export const LOCAL_PROVIDER_CALL: LocalActivityOptions = { startToCloseTimeout: '15 seconds', localRetryThreshold: '1 minute', retry: PROVIDER_CALL.retry };

/**
 * One batch of an endpoint's webhook deliveries: sent concurrently, each receiver has WEBHOOK_TIMEOUT_MS (10 s). The
 * deliveries' own retry times, not the activity's, decide when a failed delivery is tried again.
 */
export const WEBHOOK_BATCH: ActivityOptions = { startToCloseTimeout: '30 seconds', retry: RETRY_UNTIL_THE_DATABASE_ANSWERS };

/** The operators' probe: it reports a broken path instead of waiting for it to heal, so it gives up after 3 tries. */
export const PROBE_STEP: ActivityOptions = { startToCloseTimeout: '10 seconds', retry: { maximumAttempts: 3 } };
