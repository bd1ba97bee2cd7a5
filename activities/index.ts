import type { Logger } from 'pino';
import type { Config } from '../src/config.ts';
import type { Orm } from '../src/persistence/orm.ts';
import { approvalActivities } from './approvals.ts';
import { onboardingActivities } from './onboarding.ts';
import { pixChargeActivities } from './pix-charges.ts';
import { pixPayoutActivities } from './pix-payouts.ts';
import { probeActivities } from './probe.ts';
import { tevActivities } from './tev.ts';
import { webhookActivities } from './webhooks.ts';

/** What activities may touch: the database and configuration. Everything with a side effect lives here. */
export interface ActivityDeps {
  config: Config;
  orm: Orm;
  logger: Logger;
}

export function createActivities(deps: ActivityDeps) {
  return { ...probeActivities(deps), ...onboardingActivities(deps), ...tevActivities(deps), ...webhookActivities(deps), ...approvalActivities(deps), ...pixPayoutActivities(deps), ...pixChargeActivities(deps) };
}
