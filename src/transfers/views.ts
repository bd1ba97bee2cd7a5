import type { Reply } from '../http/route.ts';
import type { TevAnswer } from './service.ts';

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
