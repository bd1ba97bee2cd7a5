import type http from 'node:http';
import type { Logger } from 'pino';
import { httpExchange, keepAliveAgentFor } from '../../shared/http-exchange.ts';
import { signWithKey } from '../../webhooks/signature.ts';
import { platformAnswered, type PspContext } from './psp.ts';
import { claimDueNotifications, finishNotification, inTransaction, retryNotification, type ClaimedNotification } from './store.ts';

/**
 * The sandbox PSP's durable sender: the notifications it owes the platform are rows of `sandbox_psp_notification`;
 * this loop claims the due ones (skip locked, with a lease), posts each signed Standard Webhooks style, and records the
 * answer. A platform that is down, or answers 5xx, 401 or 429, gets the notification again later under the same
 * webhook-id (backoff doubling to 30 s, without end); a 4xx that will never change (400, 404, 409, 422) is final.
 */

export interface NotifierOptions {
  /** The platform's notification endpoint (`{api_url}/v1/pix/provider/notifications`). */
  url: string;
  /** `whsec_<base64>`: the signing key is its decoded bytes. */
  secret: string;
  timeoutMs: number;
  logger: Logger;
}

const POLL_MS = 200;
const BATCH = 16;
/** Longer than a send can take: a row claimed by a sender that died is sent again after this. */
const LEASE_MS = 60_000;
const FIRST_RETRY_MS = 250;
const LONGEST_RETRY_MS = 30_000;
/** Answers that will be the same however often the notification is sent again. */
const FINAL_REFUSALS = new Set([400, 404, 409, 410, 422]);

type Answer = { kind: 'delivered'; status: number } | { kind: 'refused'; status: number; code: string; message: string } | { kind: 'retry'; status: number | null; error: string };

export const retryDelayMs = (attempts: number) => Math.min(FIRST_RETRY_MS * 2 ** Math.max(attempts - 1, 0), LONGEST_RETRY_MS);

async function post(o: NotifierOptions, agent: http.Agent, n: ClaimedNotification): Promise<Answer> {
  const timestamp = Math.floor(Date.now() / 1000);
  const key = Buffer.from(o.secret.slice('whsec_'.length), 'base64');
  try {
    const headers = {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(n.body),
      'webhook-id': n.id,
      'webhook-timestamp': String(timestamp),
      'webhook-signature': signWithKey(key, n.id, timestamp, n.body),
    };
    const res = await httpExchange({ method: 'POST', url: o.url, headers, body: n.body, agent, timeoutMs: o.timeoutMs });
    if (res.status >= 200 && res.status < 300) return { kind: 'delivered', status: res.status };
    const error = parseError(res.text);
    if (FINAL_REFUSALS.has(res.status)) return { kind: 'refused', status: res.status, ...error };
    return { kind: 'retry', status: res.status, error: `${error.code}: ${error.message}` };
  } catch (err) {
    return { kind: 'retry', status: null, error: err instanceof Error ? err.message : String(err) };
  }
}

function parseError(text: string): { code: string; message: string } {
  try {
    const body = JSON.parse(text) as { code?: unknown; message?: unknown };
    return { code: typeof body.code === 'string' ? body.code : 'UNKNOWN', message: typeof body.message === 'string' ? body.message : text.slice(0, 200) };
  } catch {
    return { code: 'UNKNOWN', message: text.slice(0, 200) };
  }
}

/** Records what the platform answered; the answer to a `pix.received` of a payout also decides that payout. */
async function record(ctx: PspContext, n: ClaimedNotification, answer: Answer): Promise<void> {
  if (answer.kind === 'retry') {
    await retryNotification(ctx.pool, n.id, answer.status, answer.error, retryDelayMs(n.attempts));
    return;
  }
  const [status, error] = answer.kind === 'delivered' ? (['DELIVERED', null] as const) : (['REFUSED', `${answer.code}: ${answer.message}`] as const);
  const payoutId = n.type === 'pix.received' ? n.payoutId : null;
  // Nearly every notification decides nothing more here, and is recorded by one statement.
  if (!payoutId) return finishNotification(ctx.pool, n.id, status, answer.status, error);
  await inTransaction(ctx.pool, async (tx) => {
    await finishNotification(tx, n.id, status, answer.status, error);
    await platformAnswered(tx, ctx, payoutId, answer.kind === 'delivered' ? { accepted: true } : { accepted: false, code: answer.code, message: answer.message });
  });
}

export function startNotifier(ctx: PspContext, o: NotifierOptions): { stop(): Promise<void> } {
  const agent = keepAliveAgentFor(o.url);
  let running = true;
  let wake: (() => void) | null = null;

  async function sendDue(): Promise<number> {
    const due = await claimDueNotifications(ctx.pool, ctx.platformUrl, BATCH, LEASE_MS);
    await Promise.all(
      due.map(async (n) => {
        const answer = await post(o, agent, n);
        if (answer.kind === 'refused') o.logger.warn({ notificationId: n.id, type: n.type, status: answer.status, code: answer.code }, 'notification refused by the platform');
        if (answer.kind === 'retry' && n.attempts === 1) o.logger.info({ notificationId: n.id, type: n.type, status: answer.status, error: answer.error }, 'notification not delivered; retrying');
        await record(ctx, n, answer);
      }),
    );
    return due.length;
  }

  const loop = (async () => {
    while (running) {
      let sent = 0;
      try {
        sent = await sendDue();
      } catch (err) {
        o.logger.error({ err }, 'notification sender: the database did not answer');
      }
      // A full batch suggests more are due: go again at once.
      if (sent < BATCH) await new Promise<void>((resolve) => ((wake = resolve), setTimeout(resolve, POLL_MS)));
    }
  })();

  return {
    async stop() {
      running = false;
      (wake as (() => void) | null)?.();
      await loop;
      agent.destroy();
    },
  };
}
