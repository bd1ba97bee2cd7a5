import { randomInt, randomUUID } from 'node:crypto';
import { newCpf, PASSWORD, tenantHeaders, type Onboarded } from '../support/fixtures.ts';
import { saoPauloWallClock } from '../../src/shared/time.ts';
import { http } from '../support/http.ts';
import type { Platform } from '../support/platform.ts';

/** The accounts a load moves money between, and the keys it uses. */
export interface LoadCast {
  tenantId: string;
  /** Pays TEVs over the integration API, and by Pix key. */
  payer: Onboarded & { key: string; pixAccountId: string };
  payee: Onboarded;
  /** Under dual approval: its TEVs are held. */
  held: Onboarded & { key: string };
}

/** Where a load is sent: the platform's two APIs (one api's, or a load balancer's). */
export type LoadTarget = Pick<Platform, 'apiUrl' | 'holderUrl'>;

export type OperationKind = 'tev' | 'pix' | 'charge' | 'held' | 'registration';

/** One request of the load and how it was answered. */
export interface Answered {
  kind: OperationKind;
  status: number;
  body: any;
  ms: number;
}

/**
 * What the interface and the README promise each request may answer (503: the request deadline passed; 429 for Pix:
 * more simultaneous PIN checks of one holder than allowed, to be retried).
 */
export const DOCUMENTED: Record<OperationKind, number[]> = {
  tev: [200, 422, 502, 503],
  pix: [201, 202, 422, 429, 503],
  charge: [201, 503],
  // A held TEV whose dual-approval check did not answer in time is `submitted_unknown`, then resolved FAILED.
  held: [202, 502, 503],
  registration: [201, 503],
};

const KINDS: OperationKind[] = ['tev', 'tev', 'tev', 'pix', 'charge', 'held', 'registration'];

async function one(stack: LoadTarget, cast: LoadCast, kind: OperationKind): Promise<Answered> {
  const started = Date.now();
  const key = randomUUID();
  let res;
  switch (kind) {
    case 'tev': {
      // Now and then an amount the sandbox leaves unknown (,97), so the resolution workflow works under the fault too.
      const amountCents = randomInt(10) === 0 ? 197 : randomInt(1, 90);
      res = await http('POST', `${stack.apiUrl}/v1/tev`, {
        body: { destinationBranch: cast.payee.account.agency, destinationAccount: cast.payee.account.number, amountCents },
        headers: { authorization: `Bearer ${cast.payer.key}`, 'idempotency-key': key },
      });
      break;
    }
    case 'held':
      res = await http('POST', `${stack.apiUrl}/v1/tev`, {
        body: { destinationBranch: cast.payee.account.agency, destinationAccount: cast.payee.account.number, amountCents: 5 },
        headers: { authorization: `Bearer ${cast.held.key}`, 'idempotency-key': key },
      });
      break;
    case 'pix':
      res = await http('POST', `${stack.holderUrl}/pix/payment`, {
        body: { accountId: cast.payer.account.id, pin: cast.payer.pin, pixKey: 'loja@example.com', pixKeyType: 'EMAIL', amount: randomInt(1, 50) / 100 },
        headers: { ...tenantHeaders(cast.tenantId, cast.payer.token), 'idempotency-key': key },
      });
      break;
    case 'charge':
      res = await http('POST', `${stack.apiUrl}/v1/pix-accounts/${cast.payer.pixAccountId}/charges`, {
        body: { amountCents: '1000', expiresInSeconds: 3 },
        headers: { authorization: `Bearer ${cast.payer.key}`, 'idempotency-key': key },
      });
      break;
    case 'registration':
      res = await http('POST', `${stack.holderUrl}/persons`, {
        body: { name: 'Maria da Silva', document: newCpf(), email: `${key}@example.com`, password: PASSWORD },
        headers: tenantHeaders(cast.tenantId),
      });
      break;
  }
  return { kind, status: res.status, body: res.body, ms: Date.now() - started };
}

/**
 * Mixed requests from `concurrency` clients until `until()` says stop. A request that fails at the transport level
 * (the api was killed under it) is recorded as status 0: the client saw the connection drop.
 */
export async function runLoad(stack: LoadTarget, cast: LoadCast, concurrency: number, until: () => boolean): Promise<Answered[]> {
  const answered: Answered[] = [];
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (!until()) {
        const kind = KINDS[randomInt(KINDS.length)]!;
        const started = Date.now();
        try {
          answered.push(await one(stack, cast, kind));
        } catch {
          answered.push({ kind, status: 0, body: null, ms: Date.now() - started });
          await new Promise((r) => setTimeout(r, 200));
        }
      }
    }),
  );
  return answered;
}

/** São Paulo's date and time (with seconds) `ms` from now: what a holder writes to pay then. */
const inSaoPaulo = (ms: number): { date: string; time: string } => saoPauloWallClock(new Date(Date.now() + ms));

/** The work a load leaves running on its own: a batch payout, and scheduled payments with the moment they are due. */
export interface Background {
  batchId: string;
  scheduleIds: string[];
  /** The scheduled payments' due time (ms since the epoch). */
  dueAt: number;
}

export const BATCH_TEV_ITEMS = 400;
export const BATCH_PIX_ITEMS = 40;

/**
 * Starts, through the payer's key, a batch of TEV and Pix items (its Pix few in flight at a time, so that it runs for
 * several seconds) and two scheduled payments, a TEV and a Pix, due `dueInMs` from now (to the second): what a fault
 * meets half done.
 */
export async function startBackground(stack: LoadTarget, cast: LoadCast, dueInMs: number): Promise<Background> {
  const base = `${stack.apiUrl}/v1/pix-accounts/${cast.payer.pixAccountId}`;
  const headers = () => ({ authorization: `Bearer ${cast.payer.key}`, 'idempotency-key': randomUUID() });
  const to = { branch: cast.payee.account.agency, account: cast.payee.account.number };
  const items = [
    ...Array.from({ length: BATCH_TEV_ITEMS }, (_, n) => ({ kind: 'TEV', externalRef: `t-${n}`, amountCents: String(randomInt(1, 90)), ...to })),
    ...Array.from({ length: BATCH_PIX_ITEMS }, (_, n) => ({ kind: 'PIX', externalRef: `p-${n}`, amountCents: String(randomInt(1, 50)), pixKey: 'loja@example.com', pixKeyType: 'EMAIL' })),
  ];
  const batch = await http('POST', `${base}/batches`, { body: { items }, headers: headers() });
  if (batch.status !== 202) throw new Error(`the batch was answered ${batch.status} ${JSON.stringify(batch.body)}`);
  const when = inSaoPaulo(dueInMs);
  const scheduled = await Promise.all(
    [
      { kind: 'TEV', ...to, amountCents: '4117' },
      { kind: 'PIX_KEY', pixKey: 'loja@example.com', pixKeyType: 'EMAIL', amountCents: '4119' },
    ].map((target) => http('POST', `${base}/scheduled-payments`, { body: { ...target, ...when }, headers: headers() })),
  );
  for (const res of scheduled) if (res.status !== 201) throw new Error(`a schedule was answered ${res.status} ${JSON.stringify(res.body)}`);
  return { batchId: batch.body.batchId, scheduleIds: scheduled.map((res) => res.body.id), dueAt: Date.parse(scheduled[0]!.body.occurrences[0].dueAt) };
}
