import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { buildBrCode } from '../../src/pix/brcode.ts';
import { adminOk } from '../support/admin.ts';
import { apiKey, fund, newCnpj, newCpf, newTenant, onboarded, PIN, pixAccountIdOf, tenantHeaders, waitFor, type Onboarded } from '../support/fixtures.ts';
import { http, type HttpResult } from '../support/http.ts';
import type { Platform } from '../support/platform.ts';
import { startReceiver, testCertificate } from '../support/receiver.ts';

/**
 * Realistic data for the upgrade test (issue 24): a platform of the previous version is exercised through its real
 * interfaces (holder API, integration API, operator CLI, sandbox endpoints and the sandbox PSP's controls), and the
 * database it leaves is then upgraded in place. Everything it starts has reached a final state when it returns, but
 * for one Pix payout made with the worker stopped: debited, PROCESSING, its hand-off the one row of workflow_start.
 * The worker stays stopped: the caller stops the platform.
 */

export interface SeedSummary {
  tenantIds: string[];
  holders: Array<{ tenantId: string; document: string; password: string; accountId: string }>;
  notes: string[];
}

/**
 * What the seeded platform must be started with: the worker relays the outbox to webhooks (deliveries exist), trusts
 * the test receiver's certificate, and the sandbox PSP settles within a fraction of a second (the default is 2 s).
 */
export const seedPlatformEnv = (): NodeJS.ProcessEnv => ({ OUTBOX_RELAY: '1', WEBHOOK_CA_FILE: testCertificate().certFile, SANDBOX_PIX_SETTLE_MS: '400' });

const FINAL_WAIT_MS = 60_000;
const WEBHOOK_TOKEN = 'whsec-upgrade-seed-token-of-at-least-32-characters';
const ALL_EVENTS = [
  'pix.in.received', 'pix.payout.succeeded', 'pix.payout.failed', 'pix.payout.cancelled', 'pix.payout.refunded',
  'pix.charge.paid', 'pix.charge.expired', 'pix.charge.refunded', 'tev.in.received', 'tev.out.succeeded', 'tev.out.failed',
];

type Query = <T = any>(text: string, params?: unknown[]) => Promise<T[]>;

/** A holder able to use the integration API: its Pix account and a key scoped to it. */
type Integrated = Onboarded & { pix: string; key: string };

function expectAnswer(res: HttpResult, status: number, what: string): any {
  if (res.status !== status) throw new Error(`${what}: expected ${status}, got ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

export async function seedRealisticData(platform: Platform): Promise<SeedSummary> {
  for (const [name, value] of Object.entries(seedPlatformEnv())) {
    if (name !== 'SANDBOX_PIX_SETTLE_MS' && platform.env[name] !== value) throw new Error(`the seeded platform must be started with startPlatform(seedPlatformEnv()): ${name} is not ${value}`);
  }
  // The platform's own database: the caller may run it on another database than the test run's.
  const pool = new pg.Pool({ connectionString: platform.env.DATABASE_URL, max: 2 });
  const query: Query = async (text, params = []) => (await pool.query(text, params)).rows;
  const receiver = await startReceiver();
  try {
    return await seed(platform, query, receiver.url);
  } finally {
    await receiver.close();
    await pool.end();
  }
}

async function seed(platform: Platform, query: Query, receiverUrl: string): Promise<SeedSummary> {
  const notes: string[] = [];
  const cli = (...args: string[]) => adminOk(platform.env, ...args);

  // Two tenants: A charges every fee; B charges none and lets client tokens pay without a PIN.
  const [tenantA, tenantB] = await Promise.all([newTenant(platform, { name: 'Banco Azul Digital' }), newTenant(platform, { name: 'Cooperativa Verde', pinExempt: true })]);
  const [, tenantKey, alice, padaria, carol, erin, frank] = await Promise.all([
    cli('fees:set', '--tenant', tenantA, '--tev-out-cents', '150', '--tev-in-cents', '50', '--pix-out-cents', '100', '--pix-in-cents', '10', '--qr-out-cents', '50'),
    cli('tenant-key:create', '--tenant', tenantB),
    onboarded(platform, tenantA),
    onboarded(platform, tenantA, 'COMPANY'),
    onboarded(platform, tenantA),
    onboarded(platform, tenantB),
    onboarded(platform, tenantB),
  ]);
  notes.push(`tenant A ${tenantA}: fees tev-out 150, tev-in 50, pix-out 100 (alice's account 80), pix-in 10, qr-out 50`);
  notes.push(`tenant B ${tenantB}: PIN-exempt, no fees, one tenant key`);

  const integrated = async (h: Onboarded): Promise<Integrated> => {
    const pix = await pixAccountIdOf(platform, h.tenantId, h.document);
    return { ...h, pix, key: await apiKey(platform, h.tenantId, pix) };
  };
  const [aliceApi, erinApi, frankApi] = await Promise.all([
    integrated(alice),
    integrated(erin),
    integrated(frank),
    cli('fees:set', '--tenant', tenantA, '--account', alice.account.id, '--pix-out-cents', '80'),
    cli('account:dual-approval', '--account', padaria.account.id, '--approver-document', carol.document),
  ]);
  notes.push(`dual approval: the company's account ${padaria.account.id} needs carol (${carol.document})`);

  // Webhooks before any money moves, so every event of these accounts has its deliveries.
  const webhook = async (h: Integrated, events: string[]) =>
    expectAnswer(
      await http('POST', `${platform.apiUrl}/v1/pix-accounts/${h.pix}/webhooks`, {
        body: { url: `${receiverUrl}/${h.pix}`, events, authToken: WEBHOOK_TOKEN },
        headers: { authorization: `Bearer ${h.key}`, 'idempotency-key': randomUUID() },
      }),
      201,
      'webhook registration',
    ).id as string;
  const [aliceHook, erinHook, frankHook] = await Promise.all([webhook(aliceApi, ALL_EVENTS), webhook(erinApi, ['pix.in.received', 'pix.payout.succeeded', 'pix.payout.refunded']), webhook(frankApi, ['tev.in.received'])]);
  expectAnswer(await http('DELETE', `${platform.apiUrl}/v1/pix-accounts/${frankApi.pix}/webhooks/${frankHook}`, { headers: { authorization: `Bearer ${frankApi.key}` } }), 200, 'webhook deletion');
  notes.push(`webhooks: alice's (every event) ${aliceHook} and erin's ${erinHook} enabled, frank's ${frankHook} deleted`);

  await Promise.all([
    fund(platform, tenantA, alice.account.id, 1_000_000),
    fund(platform, tenantA, padaria.account.id, 200_000),
    fund(platform, tenantA, carol.account.id, 5_000),
    fund(platform, tenantB, erin.account.id, 300_000),
    fund(platform, tenantB, frank.account.id, 2_000),
  ]);

  const [payouts, charges] = await Promise.all([
    transfers(platform, { alice, padaria, carol, erin, frank, aliceApi, frankApi, tenantKey: tenantKey.key }),
    pixPayouts(platform, { alice, erin }),
    pixCharges(platform, { aliceApi, erin }),
    approvals(platform, { padaria, carol, alice }),
  ]).then(([, p, c]) => [p, c] as const);

  // The outcomes that come later than a final-looking state: returns after POSTED, a refund reaching its payer.
  await waitFor(async () => {
    const rows = await query(`select id, status, refunded_cents::text as refunded from pix_payout where id = any($1)`, [[...payouts.returned.keys(), charges.scannedPayoutId]]);
    const expected = new Map([...payouts.returned, [charges.scannedPayoutId, '500']]);
    return rows.length === expected.size && rows.every((r) => r.status === 'REFUNDED' && r.refunded === expected.get(r.id));
  }, FINAL_WAIT_MS, 'the returned payouts to be REFUNDED');
  await waitFor(async () => (await query(`select 1 from sandbox_psp_return where end_to_end_id = $1`, [charges.externalRefundEndToEndId])).length === 1, FINAL_WAIT_MS, "the charge's refund to reach the PSP");
  await untilSettled(platform, query, [tenantA, tenantB]);

  // The last hand-off: a Pix payment made while no worker runs. The api records its payout's hand-off and leaves it
  // to the worker's reconciler (a holder's registration would not do: the api starts its onboarding itself at once).
  await platform.stopWorker();
  const inFlight = expectAnswer(await payByKey(platform, alice, 1.5, 'loja@example.com', 'EMAIL'), 201, 'Pix payment with the worker stopped').payout;
  const [{ n: handOffs }] = await query(`select count(*)::int as n from workflow_start`);
  if (handOffs !== 1) throw new Error(`expected exactly one hand-off in workflow_start, found ${handOffs}`);
  notes.push(`payout ${inFlight.payoutId} of alice (150 cents, debited, ${inFlight.status}) was made with the worker stopped: its hand-off is the one row of workflow_start, and the only unsettled work`);
  notes.push(`every holder's password is the fixtures' PASSWORD, every PIN the fixtures' PIN (${PIN})`);

  return {
    tenantIds: [tenantA, tenantB],
    holders: [alice, padaria, carol, erin, frank].map((h) => ({ tenantId: h.tenantId, document: h.document, password: h.password, accountId: h.account.id })),
    notes,
  };
}

const pinQueues = new Map<string, Promise<unknown>>();
/** One holder's requests that check its PIN go one at a time: the platform answers 429 to more than three at once. */
function withPin<T>(who: Onboarded, request: () => Promise<T>): Promise<T> {
  const next = (pinQueues.get(who.holder.id) ?? Promise.resolve()).then(request);
  pinQueues.set(who.holder.id, next.catch(() => undefined));
  return next;
}

const tevByHolder = (platform: Platform, from: Onboarded, to: Onboarded, body: Record<string, unknown>, token = from.token) =>
  withPin(from, () =>
    http('POST', `${platform.holderUrl}/accounts/${from.account.id}/tev/payment`, {
      body: { accountNumber: to.account.number, ...body },
      headers: { ...tenantHeaders(from.tenantId, token), 'idempotency-key': randomUUID() },
    }),
  );
const tevByApi = (platform: Platform, from: Integrated, to: Onboarded, body: Record<string, unknown>) =>
  http('POST', `${platform.apiUrl}/v1/tev`, {
    body: { destinationBranch: to.account.agency, destinationAccount: to.account.number, ...body },
    headers: { authorization: `Bearer ${from.key}`, 'idempotency-key': randomUUID() },
  });

/** TEVs of every origin: with fees, with an externalRef, refused for balance, and paid with a client token without PIN. */
async function transfers(platform: Platform, h: { alice: Onboarded; padaria: Onboarded; carol: Onboarded; erin: Onboarded; frank: Onboarded; aliceApi: Integrated; frankApi: Integrated; tenantKey: string }) {
  // The holder API wraps the outcome in `tev`; the integration API answers it bare.
  const done = (res: HttpResult, what: string) => {
    const body = expectAnswer(res, 200, what);
    if ((body.tev ?? body).status !== 'DONE') throw new Error(`${what}: not DONE ${JSON.stringify(body)}`);
  };
  done(await tevByHolder(platform, h.alice, h.padaria, { amount: 123.45, pin: h.alice.pin, description: 'Encomenda de pães' }), 'holder TEV');
  done(await tevByHolder(platform, h.alice, h.carol, { amount: 50, pin: h.alice.pin }), 'holder TEV');
  done(await tevByApi(platform, h.aliceApi, h.carol, { amountCents: '4321', externalRef: `nf-${randomUUID().slice(0, 8)}` }), 'integration TEV with externalRef');
  const refused = expectAnswer(await tevByApi(platform, h.frankApi, h.erin, { amountCents: '999999' }), 422, 'TEV beyond the balance');
  if (refused.reason !== 'INSUFFICIENT_BALANCE') throw new Error(`TEV beyond the balance: ${JSON.stringify(refused)}`);
  const client = expectAnswer(
    await http('POST', `${platform.holderUrl}/authenticate/clients`, { body: { document: h.erin.document }, headers: { ...tenantHeaders(h.erin.tenantId), 'x-tenant-api-key': h.tenantKey } }),
    200,
    'client authentication',
  );
  done(await tevByHolder(platform, h.erin, h.frank, { amount: 75.5 }, client.token), 'TEV with a client token');
  done(await tevByHolder(platform, h.frank, h.erin, { amount: 5, pin: h.frank.pin }), 'holder TEV');
}

const payByKey = (platform: Platform, who: Onboarded, amount: number, pixKey: string, pixKeyType: string) =>
  withPin(who, () =>
    http('POST', `${platform.holderUrl}/pix/payment`, {
      body: { accountId: who.account.id, pin: who.pin, pixKey, pixKeyType, amount },
      headers: { ...tenantHeaders(who.tenantId, who.token), 'idempotency-key': randomUUID() },
    }),
  );
const payByQrCode = (platform: Platform, who: Onboarded, qrCode: string) =>
  withPin(who, () =>
    http('POST', `${platform.holderUrl}/pix/qrcode/payment`, {
      body: { accountId: who.account.id, pin: who.pin, qrCode },
      headers: { ...tenantHeaders(who.tenantId, who.token), 'idempotency-key': randomUUID() },
    }),
  );
const payoutOf = async (platform: Platform, who: Onboarded, payoutId: string) =>
  (await http('GET', `${platform.holderUrl}/accounts/${who.account.id}/payouts/${payoutId}`, { headers: tenantHeaders(who.tenantId, who.token) })).body;
const payoutIn = (platform: Platform, who: Onboarded, payoutId: string, status: string) =>
  waitFor(async () => {
    const p = await payoutOf(platform, who, payoutId);
    return p.status === status ? p : undefined;
  }, FINAL_WAIT_MS, `payout ${payoutId} ${status}`);

/**
 * Pix payouts in every final state, by every key type and by a static BR Code. The sandbox PSP decides by the cents
 * (README): ,91 fails, ,92 is cancelled, ,94 is posted and then half returned; a return is also made through its
 * control. Answers the payouts that end REFUNDED, with the cents returned.
 */
async function pixPayouts(platform: Platform, h: { alice: Onboarded; erin: Onboarded }) {
  const started = async (who: Onboarded, res: Promise<HttpResult>) => ({ who, id: expectAnswer(await res, 201, 'Pix payment').payout.payoutId as string });
  const [posted, failed, cancelled, halfReturned, toReturn, qr] = await Promise.all([
    Promise.all([
      started(h.alice, payByKey(platform, h.alice, 10, 'loja@example.com', 'EMAIL')),
      started(h.alice, payByKey(platform, h.alice, 3, newCpf(), 'CPF')),
      started(h.alice, payByKey(platform, h.alice, 4, newCnpj(), 'CNPJ')),
      started(h.erin, payByKey(platform, h.erin, 5, '+5511987654321', 'PHONE')),
      started(h.erin, payByKey(platform, h.erin, 6, randomUUID(), 'EVP')),
    ]),
    started(h.alice, payByKey(platform, h.alice, 10.91, 'loja@example.com', 'EMAIL')),
    started(h.erin, payByKey(platform, h.erin, 10.92, 'loja@example.com', 'EMAIL')),
    started(h.alice, payByKey(platform, h.alice, 10.94, 'loja@example.com', 'EMAIL')),
    started(h.alice, payByKey(platform, h.alice, 20, 'fornecedor@example.com', 'EMAIL')),
    started(h.alice, payByQrCode(platform, h.alice, buildBrCode({ pixKey: 'loja@example.com', merchantName: 'Padaria Pão Quente', merchantCity: 'São Paulo', amountCents: 1234n, txid: 'PEDIDO123' }))),
  ]);

  // The payer's institution was told the Pix came back (devolução): the sandbox PSP's return control.
  const { metadata } = await payoutIn(platform, h.alice, toReturn.id, 'POSTED');
  const returned = await fetch(`${platform.pspUrl}/sandbox/returns`, {
    method: 'POST',
    headers: { authorization: `Bearer ${platform.env.PIX_PROVIDER_API_KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify({ endToEndId: metadata.endToEndId, amountCents: '700' }),
  });
  if (returned.status !== 201) throw new Error(`the PSP's return control: ${returned.status} ${await returned.text()}`);

  await Promise.all([
    ...[...posted, qr].map((p) => payoutIn(platform, p.who, p.id, 'POSTED')),
    payoutIn(platform, failed.who, failed.id, 'FAILED'),
    payoutIn(platform, cancelled.who, cancelled.id, 'CANCELLED'),
  ]);
  return { returned: new Map([[halfReturned.id, '547'], [toReturn.id, '700']]) };
}

/**
 * Charges of alice: one paid by an outside payer and partly refunded (the return leaves for another institution), one
 * paid by erin scanning its BR Code and partly refunded (the return reaches erin's payout), one left to expire.
 */
async function pixCharges(platform: Platform, h: { aliceApi: Integrated; erin: Onboarded }) {
  const charges = `${platform.apiUrl}/v1/pix-accounts/${h.aliceApi.pix}/charges`;
  const auth = { authorization: `Bearer ${h.aliceApi.key}` };
  const create = async (body: Record<string, unknown>) => expectAnswer(await http('POST', charges, { body, headers: { ...auth, 'idempotency-key': randomUUID() } }), 201, 'charge creation');
  const refund = async (chargeId: string, amountCents: string) =>
    expectAnswer(await http('POST', `${charges}/${chargeId}/refunds`, { body: { amountCents }, headers: { ...auth, 'idempotency-key': randomUUID() } }), 201, 'charge refund');
  const chargeIn = (chargeId: string, status: string) =>
    waitFor(async () => ((await http('GET', `${charges}/${chargeId}`, { headers: auth })).body.status === status ? true : undefined), FINAL_WAIT_MS, `charge ${chargeId} ${status}`);

  const [outside, scanned, expiring] = await Promise.all([create({ amountCents: 2500, tag: 'mesa-7' }), create({ amountCents: '1500', tag: 'pedido-42' }), create({ amountCents: 900, tag: 'expira', expiresInSeconds: 2 })]);

  expectAnswer(
    await http('POST', `${platform.holderUrl}/sandbox/pix/charges/${outside.txid}/pay`, { body: { payerName: 'Joana Pagadora', payerDocument: newCpf() }, headers: tenantHeaders(h.aliceApi.tenantId) }),
    201,
    'charge payment',
  );
  const externalRefund = await refund(outside.chargeId, '1000');

  const scan = expectAnswer(await payByQrCode(platform, h.erin, scanned.brCode), 201, 'paying a charge by its BR Code');
  await Promise.all([payoutIn(platform, h.erin, scan.payout.payoutId, 'POSTED'), chargeIn(scanned.chargeId, 'PAID')]);
  await refund(scanned.chargeId, '500');

  await chargeIn(expiring.chargeId, 'EXPIRED');
  return { scannedPayoutId: scan.payout.payoutId as string, externalRefundEndToEndId: externalRefund.refundEndToEndId as string };
}

/** Dual approval on the company's account: a TEV and a Pix approved (executed), a Pix rejected. */
async function approvals(platform: Platform, h: { padaria: Onboarded; carol: Onboarded; alice: Onboarded }) {
  const held = async (res: Promise<HttpResult>) => expectAnswer(await res, 202, 'held payment').approvalRequestId as string;
  const decide = async (id: string, action: 'approve' | 'reject', status: string) => {
    const res = await withPin(h.carol, () => http('POST', `${platform.holderUrl}/approvals/${id}/${action}`, { body: { pin: h.carol.pin }, headers: tenantHeaders(h.carol.tenantId, h.carol.token) }));
    if (expectAnswer(res, 200, `approval ${action}`).status !== status) throw new Error(`approval ${action}: ${JSON.stringify(res.body)}`);
    return res.body;
  };
  const [tev, pixApproved, pixRejected] = await Promise.all([
    held(tevByHolder(platform, h.padaria, h.alice, { amount: 980, pin: h.padaria.pin, description: 'Aluguel do ponto' })),
    held(payByKey(platform, h.padaria, 310.5, 'moinho@example.com', 'EMAIL')),
    held(payByKey(platform, h.padaria, 45, newCnpj(), 'CNPJ')),
  ]);
  await decide(tev, 'approve', 'EXECUTED');
  const executed = await decide(pixApproved, 'approve', 'EXECUTED');
  await decide(pixRejected, 'reject', 'REJECTED');
  await payoutIn(platform, h.padaria, executed.result.payoutId, 'POSTED');
}

/**
 * Waits until nothing of these tenants is left to do: payouts, transfers, charges and approvals final, holders
 * active, the outbox relayed and every delivery delivered, the PSP's notifications to this platform delivered and
 * its payouts decided, and no hand-off waiting for this platform's worker.
 */
async function untilSettled(platform: Platform, query: Query, tenantIds: string[]) {
  let open: unknown[] = [];
  await waitFor(async () => {
    open = await query(
      `select 'pix_payout' as what, id, status from pix_payout where tenant_id = any($1) and status not in ('POSTED', 'FAILED', 'CANCELLED', 'REFUNDED', 'REJECTED')
       union all select 'tev_transfer', id, status from tev_transfer where tenant_id = any($1) and status not in ('DONE', 'FAILED')
       union all select 'pix_charge', id, status from pix_charge where tenant_id = any($1) and status = 'ACTIVE'
       union all select 'approval_request', id::text, status from approval_request where tenant_id = any($1) and status in ('PENDING', 'APPROVED')
       union all select 'holder', id::text, status from holder where tenant_id = any($1) and status <> 'ACTIVE'
       union all select 'webhook_delivery', d.id, d.status from webhook_delivery d join webhook_endpoint e on e.id = d.endpoint_id where e.tenant_id = any($1) and d.status <> 'DELIVERED'
       union all select 'event_outbox', e.id::text, e.type from event_outbox e, event_relay_cursor c where c.relay = 'webhooks' and e.tenant_id = any($1) and (e.txid, e.seq) > (c.txid, c.seq)
       union all select 'sandbox_psp_notification', id, status from sandbox_psp_notification where platform_url = $2 and status = 'PENDING'
       union all select 'sandbox_psp_payout', s.payout_id, s.outcome from sandbox_psp_payout s join pix_payout p on p.id = s.payout_id where p.tenant_id = any($1) and s.outcome = 'PENDING'
       union all select 'workflow_start', key, workflow_type from workflow_start where task_queue = $3`,
      [tenantIds, platform.env.SANDBOX_PSP_NOTIFY_URL, platform.env.TEMPORAL_TASK_QUEUE],
    );
    return open.length === 0;
  }, FINAL_WAIT_MS, 'every piece of work to be final').catch((err: Error) => {
    throw new Error(`${err.message}; still open: ${JSON.stringify(open)}`);
  });
}
