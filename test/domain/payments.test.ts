/**
 * Hold or pay, in process: the use cases of src/payments/ called directly on the run's database, with no HTTP route in
 * between. A TEV and a Pix payment from an account without an approver are paid in the request; from an account under
 * dual approval they are held, nothing moving, until the approver's decision runs them (`approveAndExecute`, the
 * approval workflow's step). A holder's payment checks the PIN first. The Pix key directory is the sandbox PSP, served
 * in process over HTTP; Temporal is the run's own (only a held payment's hand-off reaches it, on a task queue no
 * worker serves). A payment whose account's dual approval is turned off between its posting and its hold is posted
 * again. Every test has a tenant of its own, whose ledger must still be consistent and sum to zero afterwards.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import pg from 'pg';
import { pino } from 'pino';
import { loadConfig } from '../../src/config.ts';
import { openDatabase } from '../../src/database.ts';
import { serve } from '../../src/http/server.ts';
import type { HolderAuth } from '../../src/identity/authenticator.ts';
import { Holder } from '../../src/identity/entities.ts';
import { createPin } from '../../src/identity/pin.ts';
import { issueHolderToken, verifyHolderToken } from '../../src/identity/tokens.ts';
import { approveAndExecute } from '../../src/payments/approved-payment.ts';
import { paymentContext, type PaymentContext } from '../../src/payments/context.ts';
import { payOrHold } from '../../src/payments/hold.ts';
import { payPixKey } from '../../src/payments/pix.ts';
import { payTev, payTevAsHolder } from '../../src/payments/tev.ts';
import { closePlatform, platformContext, type PlatformContext } from '../../src/platform-context.ts';
import { createPspApp } from '../../src/sandbox/psp/app.ts';
import { PLATFORM_ISPB } from '../../src/shared/institution.ts';
import { submitTev, type TevAnswer, type TevRequest } from '../../src/transfers/service.ts';
import { pixPayoutWorkflowId } from '../../workflows/contracts/pix-payout.ts';
import { sql } from '../support/db.ts';
import { balanceOf } from '../support/ledger.ts';
import { domainDatabase, fund, onboardedHolder, tenantAccountId, type HolderAccount } from './support/accounts.ts';

const TEV_FEE = 50n;
const PIX_FEE = 100n;
const PIN = '2580';
const PSP_API_KEY = 'payments-domain-test-psp-key-0123456789';

const db = domainDatabase();

const logger = pino({ level: 'silent' });
let psp: { server: Server; pool: pg.Pool };
let ctx: PlatformContext & PaymentContext;

beforeAll(async () => {
  const pool = new pg.Pool({ connectionString: process.env.TEST_DATABASE_URL!, max: 2 });
  const server = await serve(createPspApp({ pool, platformUrl: `http://127.0.0.1:9/${randomUUID()}`, platformIspb: PLATFORM_ISPB, settleMs: 60_000 }, { apiKey: PSP_API_KEY, logger }), 0, '127.0.0.1');
  psp = { server, pool };
  const { port } = server.address() as { port: number };
  const config = loadConfig(
    {
      NODE_ENV: 'test',
      DATABASE_URL: process.env.TEST_DATABASE_URL,
      TEMPORAL_ADDRESS: process.env.TEST_TEMPORAL_ADDRESS,
      TEMPORAL_TASK_QUEUE: `payments-domain-${randomUUID()}`,
      PIX_PROVIDER_URL: `http://127.0.0.1:${port}`,
      PIX_PROVIDER_API_KEY: PSP_API_KEY,
    },
    mkdtempSync(join(tmpdir(), 'payments-domain-')),
  );
  ctx = paymentContext(platformContext(config, logger, await openDatabase(config.DATABASE_URL, 4)));
});

afterAll(async () => {
  await closePlatform(ctx);
  await new Promise((resolve) => psp.server.close(resolve));
  await psp.pool.end();
});

interface World {
  tenantId: string;
  payer: HolderAccount;
  payee: HolderAccount;
  approver: HolderAccount;
  settlementId: string;
}

/** A tenant charging R$ 0,50 per TEV and R$ 1,00 per Pix sent; a payer with R$ 100,00 and a PIN; a payee; an approver. */
async function world(): Promise<World> {
  const em = db.em();
  const tenantId = await db.tenant({ tevOut: TEV_FEE, pixOut: PIX_FEE });
  const [payer, payee, approver] = await Promise.all([onboardedHolder(em, tenantId, 'Maria Pagadora'), onboardedHolder(em, tenantId, 'João Recebedor'), onboardedHolder(em, tenantId, 'Ana Aprovadora')]);
  await fund(em, tenantId, payer.accountId, 10_000n);
  const fork = em.fork();
  await createPin(fork, ctx.config, await fork.findOneOrFail(Holder, { id: payer.holderId }), PIN);
  return { tenantId, payer, payee, approver, settlementId: await tenantAccountId(tenantId, 'SETTLEMENT') };
}

/** What `account:dual-approval` sets: the payer's payments wait for the approver. */
const requireApproval = (w: World) => sql('update account set approver_holder_id = $1 where id = $2', [w.approver.holderId, w.payer.accountId]);

/** The payer as the holder API authenticates them: a real token's claims; `pinExempt` as for a PIN-exempt tenant's client. */
async function payerAuth(w: World, pinExempt = false): Promise<HolderAuth> {
  const em = db.em();
  const holder = await em.findOneOrFail(Holder, { id: w.payer.holderId });
  return { holder, claims: verifyHolderToken(ctx.config, issueHolderToken(ctx.config, holder)), pinExempt, em, kept: { getPart: (_ref, _part, load) => load() } };
}

const tevRequest = (w: World, amountCents: bigint, idempotencyKey = randomUUID()): TevRequest => ({
  tenantId: w.tenantId,
  sourceAccountId: w.payer.accountId,
  destination: { branch: w.payee.agency, account: w.payee.number },
  amountCents,
  description: null,
  externalRef: null,
  idempotencyKey,
  origin: 'INTEGRATION_API',
});

async function pixToJoao(w: World, amountCents: bigint, options: { pin?: string; pinExempt?: boolean; idempotencyKey?: string } = {}) {
  const auth = await payerAuth(w, options.pinExempt);
  return payPixKey(ctx, {
    auth,
    accountId: w.payer.accountId,
    pin: options.pin,
    idempotencyKey: options.idempotencyKey ?? randomUUID(),
    amountCents,
    pixKey: 'joao@example.com',
    pixKeyType: 'EMAIL',
    description: 'Almoço',
  });
}

const approvalOf = async (id: string) =>
  (await sql<{ status: string; kind: string; approver_holder_id: string; payload: { kind: string; amountCents: string } }>('select status, kind, approver_holder_id, payload from approval_request where id = $1', [id]))[0];

const payoutOf = async (id: string) => (await sql<{ status: string; amount_cents: string }>('select status, amount_cents::text from pix_payout where id = $1', [id]))[0];
const handOffOf = async (workflowId: string) => (await sql<{ workflow_id: string }>('select workflow_id from workflow_start where workflow_id = $1', [workflowId]))[0];
const tevsOf = (w: World) => sql<{ id: string; status: string }>('select id, status from tev_transfer where source_account_id = $1', [w.payer.accountId]);

describe('a TEV', () => {
  test('from an account without an approver is paid now: settled in the request, nothing held', async () => {
    const w = await world();
    const answer = await payTev(ctx, tevRequest(w, 1_000n));
    expect(answer).toEqual({ result: { kind: 'done', outcome: expect.objectContaining({ status: 'DONE', amountCents: '1000', feeCents: TEV_FEE.toString() }) } });
    expect(await balanceOf(w.payer.accountId)).toBe(10_000n - 1_000n - TEV_FEE);
    expect(await balanceOf(w.payee.accountId)).toBe(1_000n);
    expect(await sql('select id from approval_request where account_id = $1', [w.payer.accountId])).toEqual([]);
  });

  test('from an account under dual approval is held for the approver: nothing moves, and the same key answers the same request', async () => {
    const w = await world();
    await requireApproval(w);
    const key = randomUUID();
    const answer = await payTev(ctx, tevRequest(w, 1_000n, key));
    if (!('held' in answer)) throw new Error(`expected a held TEV, got ${JSON.stringify(answer)}`);
    expect(answer.held).toEqual({ approvalRequestId: expect.any(String), status: 'PENDING', expiresAt: expect.any(String) });
    expect(await approvalOf(answer.held.approvalRequestId)).toEqual({
      status: 'PENDING',
      kind: 'TEV',
      approver_holder_id: w.approver.holderId,
      payload: expect.objectContaining({ kind: 'TEV', destinationAccountId: w.payee.accountId, amountCents: '1000' }),
    });
    expect(await tevsOf(w)).toEqual([]);
    expect(await balanceOf(w.payer.accountId)).toBe(10_000n);
    expect(await payTev(ctx, tevRequest(w, 1_000n, key))).toEqual(answer);
  });

  test("the approver's decision runs the held TEV through settle_tev, once", async () => {
    const w = await world();
    await requireApproval(w);
    const answer = await payTev(ctx, tevRequest(w, 1_000n));
    if (!('held' in answer)) throw new Error('expected a held TEV');
    const requestId = answer.held.approvalRequestId;
    // Only the account's approver decides: the payer's own approval runs nothing.
    expect(await approveAndExecute(db.em(), ctx.config, requestId, w.payer.holderId)).toEqual({ status: 'NOT_APPROVER' });
    expect(await tevsOf(w)).toEqual([]);
    const executed = await approveAndExecute(db.em(), ctx.config, requestId, w.approver.holderId);
    expect(executed).toEqual({ status: 'EXECUTED', operationId: expect.any(String), reason: null, payout: null });
    expect(await tevsOf(w)).toEqual([{ id: (executed as { operationId: string }).operationId, status: 'DONE' }]);
    expect(await balanceOf(w.payer.accountId)).toBe(10_000n - 1_000n - TEV_FEE);
    expect(await balanceOf(w.payee.accountId)).toBe(1_000n);
    // The step is retried after its transaction committed: the transfer is not paid twice.
    expect(await approveAndExecute(db.em(), ctx.config, requestId, w.approver.holderId)).toEqual(executed);
    expect(await balanceOf(w.payer.accountId)).toBe(10_000n - 1_000n - TEV_FEE);
  });
});

describe('a Pix payment', () => {
  test('from an account without an approver is debited now, its settlement handed off in the same transaction', async () => {
    const w = await world();
    const answer = await pixToJoao(w, 2_590n, { pin: PIN });
    expect(answer).toEqual({ kind: 'debited', payout: expect.objectContaining({ status: 'PROCESSING', amountCents: '2590', feeCents: PIX_FEE.toString() }) });
    const { payoutId } = (answer as { payout: { payoutId: string } }).payout;
    expect(await payoutOf(payoutId)).toEqual({ status: 'PROCESSING', amount_cents: '2590' });
    expect(await balanceOf(w.payer.accountId)).toBe(10_000n - 2_590n - PIX_FEE);
    expect(await balanceOf(w.settlementId)).toBe(-10_000n + 2_590n);
    // The request made no Temporal call: the settlement's start waits in workflow_start for the reconciler.
    expect(await handOffOf(pixPayoutWorkflowId(payoutId))).toEqual({ workflow_id: pixPayoutWorkflowId(payoutId) });
  });

  test('from an account under dual approval is held for the approver, and nothing is debited', async () => {
    const w = await world();
    await requireApproval(w);
    const answer = await pixToJoao(w, 2_590n, { pin: PIN });
    if (answer.kind !== 'held') throw new Error(`expected a held payment, got ${JSON.stringify(answer)}`);
    expect(await approvalOf(answer.held.approvalRequestId)).toEqual({
      status: 'PENDING',
      kind: 'PIX',
      approver_holder_id: w.approver.holderId,
      payload: expect.objectContaining({ kind: 'PIX', amountCents: '2590', pixKey: 'joao@example.com', channel: 'PIX_OUT' }),
    });
    expect(await sql('select id from pix_payout where account_id = $1', [w.payer.accountId])).toEqual([]);
    expect(await balanceOf(w.payer.accountId)).toBe(10_000n);
  });

  test("the approver's decision debits the held payout; its settlement is left to the approval's run", async () => {
    const w = await world();
    await requireApproval(w);
    const answer = await pixToJoao(w, 2_590n, { pin: PIN });
    if (answer.kind !== 'held') throw new Error('expected a held payment');
    const executed = await approveAndExecute(db.em(), ctx.config, answer.held.approvalRequestId, w.approver.holderId);
    expect(executed).toEqual({ status: 'EXECUTED', operationId: expect.any(String), reason: null, payout: expect.objectContaining({ payoutId: expect.any(String) }) });
    const payoutId = (executed as { operationId: string }).operationId;
    expect(await payoutOf(payoutId)).toEqual({ status: 'PROCESSING', amount_cents: '2590' });
    expect(await balanceOf(w.payer.accountId)).toBe(10_000n - 2_590n - PIX_FEE);
    // No hand-off: the approval workflow starts the settlement as its child once this step committed.
    expect(await handOffOf(pixPayoutWorkflowId(payoutId))).toBeUndefined();
  });

  test('that the balance does not cover is refused, with nothing debited', async () => {
    const w = await world();
    await expect(pixToJoao(w, 10_000n, { pin: PIN })).rejects.toMatchObject({ code: 'INSUFFICIENT_BALANCE' });
    expect(await balanceOf(w.payer.accountId)).toBe(10_000n);
  });

  test("by key answers the account's refusal before the directory's, though it asks both at once", async () => {
    const w = await world();
    const auth = await payerAuth(w);
    const byKey = (accountId: string, pixKey: string) =>
      payPixKey(ctx, { auth, accountId, pin: PIN, idempotencyKey: randomUUID(), amountCents: 100n, pixKey, pixKeyType: 'EVP', description: 'Teste' });
    const unregistered = `00000000-${randomUUID().slice(9)}`;
    // Another holder's account, and a key with no owner: the account's 404 first.
    await expect(byKey(w.payee.accountId, unregistered)).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(byKey(w.payer.accountId, unregistered)).rejects.toMatchObject({ code: 'PIX_KEY_NOT_FOUND' });
    expect(await balanceOf(w.payer.accountId)).toBe(10_000n);
    expect(await balanceOf(w.payee.accountId)).toBe(0n);
  });
});

describe("a holder's payment checks the PIN", () => {
  test('before a TEV moves anything, and before a Pix payment is debited or held', async () => {
    const w = await world();
    const auth = await payerAuth(w);
    await expect(payTevAsHolder(ctx, auth, '1397', tevRequest(w, 1_000n))).rejects.toMatchObject({ code: 'INVALID_PIN' });
    await expect(payTevAsHolder(ctx, auth, undefined, tevRequest(w, 1_000n))).rejects.toMatchObject({ code: 'VALIDATION_ERROR' });
    await expect(pixToJoao(w, 2_590n, { pin: '1397' })).rejects.toMatchObject({ code: 'INVALID_PIN' });
    await requireApproval(w);
    // The third wrong PIN locks it, whether the payment would have been held or not.
    await expect(pixToJoao(w, 2_590n, { pin: '1397' })).rejects.toMatchObject({ code: 'PIN_LOCKED' });
    expect(await tevsOf(w)).toEqual([]);
    expect(await sql('select id from pix_payout where account_id = $1 union all select id::text from approval_request where account_id = $1', [w.payer.accountId])).toEqual([]);
    expect(await balanceOf(w.payer.accountId)).toBe(10_000n);
  });

  test('and the right PIN pays', async () => {
    const w = await world();
    expect(await payTevAsHolder(ctx, await payerAuth(w), PIN, tevRequest(w, 1_000n))).toEqual({ result: expect.objectContaining({ kind: 'done' }) });
    expect(await balanceOf(w.payer.accountId)).toBe(10_000n - 1_000n - TEV_FEE);
  });

  test('from a holder the api kept from before its PIN was created: the row decides that it has one', async () => {
    const w = await world();
    const auth = await payerAuth(w);
    // As an api that has not heard yet of the PIN created a moment ago still holds the holder.
    const kept = { ...auth, holder: { ...auth.holder, pinHash: null } as Holder };
    await expect(payTevAsHolder(ctx, kept, '1397', tevRequest(w, 1_000n))).rejects.toMatchObject({ code: 'INVALID_PIN' });
    expect(await payTevAsHolder(ctx, kept, PIN, tevRequest(w, 1_000n))).toEqual({ result: expect.objectContaining({ kind: 'done' }) });
    expect(await balanceOf(w.payer.accountId)).toBe(10_000n - 1_000n - TEV_FEE);
  });

  test("except for a PIN-exempt tenant's client token, which pays without it", async () => {
    const w = await world();
    expect(await payTevAsHolder(ctx, await payerAuth(w, true), undefined, tevRequest(w, 1_000n))).toEqual({ result: expect.objectContaining({ kind: 'done' }) });
    expect(await pixToJoao(w, 2_590n, { pinExempt: true })).toEqual({ kind: 'debited', payout: expect.objectContaining({ status: 'PROCESSING' }) });
    expect(await balanceOf(w.payer.accountId)).toBe(10_000n - 1_000n - TEV_FEE - 2_590n - PIX_FEE);
  });
});

describe('dual approval turned off between the posting and the hold', () => {
  const asker = (w: World, idempotencyKey: string) => ({ tenantId: w.tenantId, accountId: w.payer.accountId, requesterHolderId: null, idempotencyKey });
  const approvalsOf = (w: World) => sql('select id from approval_request where account_id = $1', [w.payer.accountId]);

  test('the payment is posted again, and paid: nothing is held', async () => {
    const w = await world();
    await requireApproval(w);
    const request = tevRequest(w, 1_000n);
    let postings = 0;
    const paid = await payOrHold<TevAnswer>(ctx, asker(w, request.idempotencyKey), async () => {
      postings++;
      const result = await submitTev(ctx, request);
      if (result.kind !== 'approval_required') return { answer: result };
      // The operator turns dual approval off once the posting has answered, before the hold reads the account.
      await sql('update account set approver_holder_id = null where id = $1', [w.payer.accountId]);
      return { toHold: { kind: 'TEV', destinationAccountId: result.destinationAccountId, amountCents: '1000', description: null, externalRef: null } };
    });
    expect(postings).toBe(2);
    expect(paid).toEqual({ answer: expect.objectContaining({ kind: 'done' }) });
    expect(await approvalsOf(w)).toEqual([]);
    expect(await balanceOf(w.payer.accountId)).toBe(10_000n - 1_000n - TEV_FEE);
  });

  test('turned off again after a second posting: TEMPORARILY_UNAVAILABLE, nothing moved or held', async () => {
    const w = await world();
    let postings = 0;
    const post = async () => {
      postings++;
      return { toHold: { kind: 'TEV', destinationAccountId: w.payee.accountId, amountCents: '1000', description: null, externalRef: null } as const };
    };
    await expect(payOrHold<TevAnswer>(ctx, asker(w, randomUUID()), post)).rejects.toMatchObject({ code: 'TEMPORARILY_UNAVAILABLE' });
    expect(postings).toBe(2);
    expect(await approvalsOf(w)).toEqual([]);
    expect(await balanceOf(w.payer.accountId)).toBe(10_000n);
  });
});
