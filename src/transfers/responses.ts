import type { Reply } from '../http/route.ts';
import type { TevAnswer } from './service.ts';
import type { TevRecord } from './store.ts';

const HTTP_STATUS = { done: 200, rejected: 422, submitted_unknown: 502 } as const;

/** Sections 4.7/4.10: the create response and its HTTP status (`providerStatusCode` only on `{api_url}`). */
export function tevCreated(result: TevAnswer, integration: boolean): { status: number; tev: Record<string, unknown> } {
  const status = HTTP_STATUS[result.kind];
  if (result.kind === 'submitted_unknown') {
    return { status, tev: { kind: result.kind, tevId: result.tevId, status: 'SUBMITTED_UNKNOWN', reason: result.reason } };
  }
  const o = result.outcome;
  if (result.kind === 'done') return { status, tev: { kind: 'done', tevId: o.tevId, status: 'DONE', amountCents: o.amountCents, feeCents: o.feeCents } };
  return { status, tev: { kind: 'rejected', tevId: o.tevId, status: 'FAILED', reason: o.reason, ...(integration ? { providerStatusCode: 422 } : {}) } };
}

export function holderTevReply(result: TevAnswer): Reply {
  const { status, tev } = tevCreated(result, false);
  return { status, body: { tev } };
}

export function integrationTevReply(result: TevAnswer): Reply {
  const { status, tev } = tevCreated(result, true);
  return { status, body: tev };
}

/** Section 4.11: a transfer read from the side of `accountId` (direction, fee and counterpart of that side). */
export function tevReadView(tev: TevRecord, accountId: string) {
  const out = tev.sourceAccountId === accountId;
  return {
    id: tev.id,
    // A transfer still PROCESSING was answered submitted_unknown: it reads the same until it resolves.
    status: tev.status === 'PROCESSING' ? ('SUBMITTED_UNKNOWN' as const) : tev.status,
    direction: out ? ('out' as const) : ('in' as const),
    amountCents: tev.amountCents,
    feeCents: (out ? tev.feeOutCents : tev.feeInCents) ?? '0',
    description: tev.description,
    externalRef: tev.externalRef,
    ...(out ? { destination: { branch: tev.destination.branch, account: tev.destination.account } } : { origin: tev.source }),
    createdAt: tev.createdAt,
    resolvedAt: tev.resolvedAt,
  };
}
