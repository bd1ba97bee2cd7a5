import { randomUUID } from 'node:crypto';
import type { TevSubmission } from '../../../workflows/contracts/tev.ts';

/** A TEV request as the integration API submits it, with a fresh tevId, end-to-end id and idempotency key. */
export function tevSubmission(
  tenantId: string,
  sourceAccountId: string,
  destination: TevSubmission['destination'],
  amountCents: bigint,
  overrides: Partial<TevSubmission> = {},
): TevSubmission {
  return {
    tevId: `t${randomUUID()}`,
    tenantId,
    sourceAccountId,
    destination,
    amountCents: amountCents.toString(),
    description: null,
    externalRef: null,
    endToEndId: randomUUID(),
    idempotencyKey: randomUUID(),
    origin: 'INTEGRATION_API',
    ...overrides,
  };
}
