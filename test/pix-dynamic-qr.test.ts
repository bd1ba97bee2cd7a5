import { constants, createHash, createPublicKey, generateKeyPairSync, randomUUID, sign, verify, X509Certificate, type KeyObject } from 'node:crypto';
import { createServer, type Server } from 'node:https';
import { createServer as createTcpServer, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { Client, Connection } from '@temporalio/client';
import { buildBrCode, parseBrCode } from '../src/pix/brcode.ts';
import { pixDocumentFetcher } from '../src/pix/document-client.ts';
import { adminOk } from './support/admin.ts';
import { closeDb, sql } from './support/db.ts';
import { apiKey, fund, newTenant, onboarded, pixAccountIdOf, shownToPixPayer, tenantHeaders, waitFor, type Onboarded } from './support/fixtures.ts';
import { http } from './support/http.ts';
import { balanceOf, expectLedgerConsistent } from './support/ledger.ts';
import { signingCertificate } from './support/pix-signing.ts';
import { startPlatform, type Platform } from './support/platform.ts';
import { freePort } from './support/ports.ts';
import { testCertificate } from './support/receiver.ts';

/**
 * Pix by dynamic QR Code, over real HTTP against a real api and worker (PostgreSQL, Temporal): holders scan charges
 * of the platform (their location served by the api, signed with the platform's key and certificate) and charges of
 * another institution (an HTTPS server in this process, with keys of its own, trusted through NODE_EXTRA_CA_CERTS and
 * allowed through PIX_LOCATION_ALLOWED_HOSTS, as the sandbox reads no other host).
 */

const QR_FEE = 50n;
const PIX_IN_FEE = 30n;
const LOCATION_MAX_PER_MINUTE = 100;
const certificate = signingCertificate();
/** The other institution's port, and a port whose server never completes a TLS handshake: both allowed. */
let pspPort: number;
let stallPort: number;

let platform: Platform;
let connection: Connection;
let temporal: Client;
let tenantA: string;
let tenantB: string;
/** Payers (funded): alice in tenant A, dave in tenant B. Receivers: bob in tenant A, carol in tenant B. */
let alice: Onboarded;
let dave: Onboarded;
let bob: Onboarded;
let carol: Onboarded;
const keys = new Map<Onboarded, { pix: string; key: string }>();

beforeAll(async () => {
  [pspPort, stallPort] = [await freePort(), await freePort()];
  platform = await startPlatform({
    SANDBOX_PIX_SETTLE_MS: '400',
    NODE_EXTRA_CA_CERTS: testCertificate().certFile,
    PIX_LOCATION_ALLOWED_HOSTS: `127.0.0.1:${pspPort},127.0.0.1:${stallPort}`,
    PIX_LOCATION_MAX_PER_MINUTE: String(LOCATION_MAX_PER_MINUTE),
    PIX_SIGNING_KEY: certificate.key,
    PIX_SIGNING_CERT: certificate.chain,
  });
  [tenantA, tenantB] = await Promise.all([newTenant(platform), newTenant(platform)]);
  for (const tenant of [tenantA, tenantB]) await adminOk(platform.env, 'fees:set', '--tenant', tenant, '--qr-out-cents', String(QR_FEE), '--pix-in-cents', String(PIX_IN_FEE));
  [alice, bob, dave, carol] = await Promise.all([onboarded(platform, tenantA), onboarded(platform, tenantA), onboarded(platform, tenantB), onboarded(platform, tenantB)]);
  await Promise.all([fund(platform, tenantA, alice.account.id, 1_000_000), fund(platform, tenantB, dave.account.id, 1_000_000)]);
  for (const receiver of [bob, carol]) {
    const pix = await pixAccountIdOf(platform, receiver.tenantId, receiver.document);
    keys.set(receiver, { pix, key: await apiKey(platform, receiver.tenantId, pix) });
  }
  connection = await Connection.connect({ address: process.env.TEST_TEMPORAL_ADDRESS! });
  temporal = new Client({ connection });
}, 120_000);

afterAll(async () => {
  if (tenantA) await expectLedgerConsistent(tenantA);
  if (tenantB) await expectLedgerConsistent(tenantB);
  await connection?.close();
  await platform?.stop();
  await closeDb();
});

async function createCharge(receiver: Onboarded, amountCents: number, expiresInSeconds = 3600) {
  const { pix, key } = keys.get(receiver)!;
  const res = await http('POST', `${platform.apiUrl}/v1/pix-accounts/${pix}/charges`, {
    body: { amountCents, expiresInSeconds },
    headers: { authorization: `Bearer ${key}`, 'idempotency-key': randomUUID() },
  });
  expect(res.status).toBe(201);
  return res.body;
}

const readCharge = (receiver: Onboarded, chargeId: string) => {
  const { pix, key } = keys.get(receiver)!;
  return http('GET', `${platform.apiUrl}/v1/pix-accounts/${pix}/charges/${chargeId}`, { headers: { authorization: `Bearer ${key}` } });
};

const scan = (payer: Onboarded, qrCode: string, options: { idempotencyKey?: string; amount?: number } = {}) =>
  http('POST', `${platform.holderUrl}/pix/qrcode/payment`, {
    body: { accountId: payer.account.id, pin: payer.pin, qrCode, ...(options.amount === undefined ? {} : { amount: options.amount }) },
    headers: { ...tenantHeaders(payer.tenantId, payer.token), 'idempotency-key': options.idempotencyKey ?? randomUUID() },
  });

const payout = (payer: Onboarded, payoutId: string) => http('GET', `${platform.holderUrl}/accounts/${payer.account.id}/payouts/${payoutId}`, { headers: tenantHeaders(payer.tenantId, payer.token) });
const payoutIn = (payer: Onboarded, payoutId: string, ...statuses: string[]) =>
  waitFor(async () => {
    const p = (await payout(payer, payoutId)).body;
    return statuses.includes(p.status) ? p : undefined;
  }, 30_000, `payout ${statuses.join(' or ')}`);
const chargePaidEvents = (chargeId: string) => sql(`select tenant_id, account_id, data from event_outbox where type = 'pix.charge.paid' and data->>'chargeId' = $1`, [chargeId]);

describe('the location of a platform charge', () => {
  test('serves the charge as a JWS signed with the key and certificate published at its jku; an unknown txid is 404', async () => {
    const charge = await createCharge(bob, 2500);
    expect(parseBrCode(charge.brCode).url).toBe(`127.0.0.1:${new URL(platform.holderUrl).port}/pix/cob/${charge.txid}`);
    const res = await fetch(`${platform.holderUrl}/pix/cob/${charge.txid}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/jose/);
    const [h, p, s] = (await res.text()).split('.');
    const header = JSON.parse(Buffer.from(h!, 'base64url').toString());
    const payload = JSON.parse(Buffer.from(p!, 'base64url').toString());
    // As the API Pix's example of a payload has it: `typ` JWS, and the signing certificate named by its thumbprints.
    const leaf = new X509Certificate(certificate.leaf);
    const thumbprint = (algorithm: string) => createHash(algorithm).update(leaf.raw).digest('base64url');
    expect(header).toEqual({
      alg: 'ES256',
      typ: 'JWS',
      kid: expect.any(String),
      jku: `https://127.0.0.1:${new URL(platform.holderUrl).port}/pix/jwks.json`,
      x5t: thumbprint('sha1'),
      'x5t#S256': thumbprint('sha256'),
    });
    expect(payload).toEqual({
      txid: charge.txid,
      revisao: 0,
      calendario: { criacao: charge.createdAt, apresentacao: expect.any(String), expiracao: 3600 },
      status: 'ATIVA',
      valor: { original: '25.00' },
      chave: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/),
    });
    // Verified here with node:crypto alone, as any payer's institution would: the key set's key of that kid.
    const jwks = (await (await fetch(`${platform.holderUrl}/pix/jwks.json`)).json()) as { keys: any[] };
    const jwk = jwks.keys.find((k: any) => k.kid === header.kid);
    expect(jwk).toMatchObject({ kty: 'EC', crv: 'P-256', alg: 'ES256', use: 'sig', x5t: header.x5t, 'x5t#S256': header['x5t#S256'] });
    expect(jwk.d).toBeUndefined();
    expect(verify('sha256', Buffer.from(`${h}.${p}`), { key: createPublicKey({ key: jwk, format: 'jwk' }), dsaEncoding: 'ieee-p1363' }, Buffer.from(s!, 'base64url'))).toBe(true);
    // The chain (x5c) is PIX_SIGNING_CERT's, leaf first; a payer checks the signature against the leaf and the leaf against its issuer.
    const chain = (jwk.x5c as string[]).map((der) => new X509Certificate(Buffer.from(der, 'base64')));
    expect(chain.map((c) => c.fingerprint256)).toEqual([leaf.fingerprint256, new X509Certificate(certificate.ca).fingerprint256]);
    expect(chain[0]!.verify(chain[1]!.publicKey)).toBe(true);
    expect(verify('sha256', Buffer.from(`${h}.${p}`), { key: chain[0]!.publicKey, dsaEncoding: 'ieee-p1363' }, Buffer.from(s!, 'base64url'))).toBe(true);

    const unknown = await http('GET', `${platform.holderUrl}/pix/cob/${'A'.repeat(32)}`);
    expect(unknown.status).toBe(404);
    expect(unknown.body).toMatchObject({ type: 'https://pix.bcb.gov.br/api/v2/error/CobPayloadNaoEncontrado', status: 404, code: 'NOT_FOUND' });
  });
});

describe('paying a platform charge by scanning its BR Code', () => {
  test.each([
    ['of the same tenant', () => ({ payer: alice, receiver: bob })],
    ['of another tenant', () => ({ payer: alice, receiver: carol })],
  ])('a holder pays the charge of a holder %s: QR_CODE_OUT for the payer, the charge PAID, the receiver credited', async (_case, who) => {
    const { payer, receiver } = who();
    const charge = await createCharge(receiver, 1234);
    const [payerBefore, receiverBefore] = [await balanceOf(payer.account.id), await balanceOf(receiver.account.id)];

    const res = await scan(payer, charge.brCode);
    expect(res.status).toBe(201);
    expect(res.body.payout).toMatchObject({ status: 'PROCESSING', amountCents: '1234', feeCents: String(QR_FEE) });
    expect(await balanceOf(payer.account.id)).toBe(payerBefore - 1234n - QR_FEE);

    const paid = await waitFor(async () => {
      const c = (await readCharge(receiver, charge.chargeId)).body;
      return c.status === 'PAID' ? c : undefined;
    }, 30_000, 'the charge to be paid');
    expect(paid).toMatchObject({ paidCents: '1234', refundedCents: '0' });
    expect(await balanceOf(receiver.account.id)).toBe(receiverBefore + 1234n - PIX_IN_FEE);

    const posted = await payoutIn(payer, res.body.payout.payoutId, 'POSTED');
    expect(posted).toMatchObject({ type: 'DEBIT', source: 'QR_CODE_OUT', feeAmount: String(QR_FEE), description: 'Pagamento QR Code MARIA DA SILVA' });
    // The payer sees the real receiver, at this institution; both sides carry the one end-to-end id of the Pix.
    expect(posted.metadata.beneficiary).toMatchObject({ name: receiver.holder.name, document: shownToPixPayer(receiver.document), branch: receiver.account.agency, account: receiver.account.number, ispb: '00000000', pixKeyType: 'EVP' });
    const [event] = await chargePaidEvents(charge.chargeId);
    expect(event).toMatchObject({ tenant_id: receiver.tenantId, account_id: receiver.account.id });
    expect(event.data).toMatchObject({ txid: charge.txid, amountCents: '1234', payerName: payer.holder.name, payerDocument: payer.document, payerInstitutionIspb: '00000000', endToEndId: posted.metadata.endToEndId });
    // The payment woke the charge's workflow: it ends PAID now, not at the expiry an hour away.
    expect(await temporal.workflow.getHandle(`pix-charge-${charge.chargeId}`).result()).toBe('PAID');
    await expectLedgerConsistent(payer.tenantId);
    await expectLedgerConsistent(receiver.tenantId);
  });

  test('the same Idempotency-Key twice pays once; paying the paid charge again is 409 CHARGE_ALREADY_PAID and moves nothing', async () => {
    const charge = await createCharge(carol, 700);
    const before = await balanceOf(dave.account.id);
    const idempotencyKey = randomUUID();
    const [a, b] = await Promise.all([scan(dave, charge.brCode, { idempotencyKey }), scan(dave, charge.brCode, { idempotencyKey })]);
    expect([a.status, b.status]).toEqual([201, 201]);
    expect(b.body.payout.payoutId).toBe(a.body.payout.payoutId);
    expect(await balanceOf(dave.account.id)).toBe(before - 700n - QR_FEE);
    await payoutIn(dave, a.body.payout.payoutId, 'POSTED');

    // A retry after the charge was paid still answers the original payout.
    const retry = await scan(dave, charge.brCode, { idempotencyKey });
    expect(retry.status).toBe(201);
    expect(retry.body.payout.payoutId).toBe(a.body.payout.payoutId);
    expect((await scan(dave, charge.brCode, { idempotencyKey, amount: 8 })).body.code).toBe('IDEMPOTENCY_KEY_REUSED');

    const again = await scan(dave, charge.brCode);
    expect(again.status).toBe(409);
    expect(again.body.code).toBe('CHARGE_ALREADY_PAID');
    expect(await balanceOf(dave.account.id)).toBe(before - 700n - QR_FEE);
    expect(await chargePaidEvents(charge.chargeId)).toHaveLength(1);
    // The location still answers, now saying why the charge cannot be paid.
    const jws = await (await fetch(`${platform.holderUrl}/pix/cob/${charge.txid}`)).text();
    expect(JSON.parse(Buffer.from(jws.split('.')[1]!, 'base64url').toString()).status).toBe('CONCLUIDA');
  });

  test('two payers scanning at once: the charge is paid once, and the other payer gets the money back', async () => {
    const charge = await createCharge(bob, 900);
    const before = [await balanceOf(alice.account.id), await balanceOf(dave.account.id)];
    const answers = await Promise.all([scan(alice, charge.brCode), scan(dave, charge.brCode)]);
    const outcomes = await Promise.all(
      answers.map(async (res, i) => {
        const payer = [alice, dave][i]!;
        if (res.status === 409) return { payer, status: res.body.code as string };
        expect(res.status).toBe(201);
        const payoutId = res.body.payout.payoutId;
        const done = await payoutIn(payer, payoutId, 'POSTED', 'FAILED');
        const [{ reason }] = await sql(`select reason from pix_payout where id = $1`, [payoutId]);
        return { payer, status: done.status as string, reason };
      }),
    );
    expect(outcomes.filter((o) => o.status === 'POSTED')).toHaveLength(1);
    const loser = outcomes.find((o) => o.status !== 'POSTED')!;
    expect(['FAILED', 'CHARGE_ALREADY_PAID']).toContain(loser.status);
    if (loser.status === 'FAILED') expect(loser.reason).toBe('Cobrança já paga');
    const after = [await balanceOf(alice.account.id), await balanceOf(dave.account.id)];
    const spent = after.map((b, i) => before[i]! - b);
    expect(spent.filter((cents) => cents === 0n)).toHaveLength(1);
    expect(spent.filter((cents) => cents === 900n + QR_FEE)).toHaveLength(1);
    expect(await chargePaidEvents(charge.chargeId)).toHaveLength(1);
    expect((await readCharge(bob, charge.chargeId)).body.paidCents).toBe('900');
  });

  test('an expired charge is 409 CHARGE_EXPIRED; another amount is 422 CHARGE_AMOUNT_MISMATCH; nothing moves', async () => {
    const before = await balanceOf(alice.account.id);
    const short = await createCharge(bob, 300, 1);
    await new Promise((r) => setTimeout(r, 1500));
    const expired = await scan(alice, short.brCode);
    expect(expired.status).toBe(409);
    expect(expired.body.code).toBe('CHARGE_EXPIRED');

    const charge = await createCharge(bob, 400);
    const mismatch = await scan(alice, charge.brCode, { amount: 4.01 });
    expect(mismatch.status).toBe(422);
    expect(mismatch.body.code).toBe('CHARGE_AMOUNT_MISMATCH');
    // The same amount, given again by the payer, is accepted.
    expect((await scan(alice, charge.brCode, { amount: 4 })).status).toBe(201);
    expect(await balanceOf(alice.account.id)).toBe(before - 400n - QR_FEE);
  });

  test('from an account under dual approval the payment is held, and pays the charge once approved', async () => {
    const [owner, approver] = await Promise.all([onboarded(platform, tenantA), onboarded(platform, tenantA)]);
    await fund(platform, tenantA, owner.account.id, 10_000);
    await adminOk(platform.env, 'account:dual-approval', '--account', owner.account.id, '--approver-document', approver.document);
    const before = await balanceOf(owner.account.id);
    const charge = await createCharge(bob, 600);
    const held = await scan(owner, charge.brCode);
    expect(held.status).toBe(202);
    expect(held.body).toMatchObject({ approvalRequestId: expect.any(String), status: 'PENDING' });
    expect(await balanceOf(owner.account.id)).toBe(before);

    const done = await http('POST', `${platform.holderUrl}/approvals/${held.body.approvalRequestId}/approve`, { body: { pin: approver.pin }, headers: tenantHeaders(tenantA, approver.token) });
    expect(done.status).toBe(200);
    expect(done.body).toMatchObject({ status: 'EXECUTED', result: { payoutId: expect.any(String), status: 'PROCESSING' } });
    await payoutIn(owner, done.body.result.payoutId, 'POSTED');
    expect((await readCharge(bob, charge.chargeId)).body).toMatchObject({ status: 'PAID', paidCents: '600' });
    expect(await balanceOf(owner.account.id)).toBe(before - 600n - QR_FEE);
  });

  test('a static code still pays its key', async () => {
    const before = await balanceOf(alice.account.id);
    const res = await scan(alice, buildBrCode({ pixKey: 'loja@example.com', merchantName: 'Padaria', merchantCity: 'Natal', amountCents: 1500n, txid: 'PEDIDO7' }));
    expect(res.status).toBe(201);
    expect(await balanceOf(alice.account.id)).toBe(before - 1500n - QR_FEE);
    expect((await payoutIn(alice, res.body.payout.payoutId, 'POSTED')).metadata.beneficiary).toMatchObject({ pixKey: 'loja@example.com', ispb: '99999999' });
  });
});

/** Another institution's server: its own key set, and whatever the test makes it serve at a location. */
interface ForeignPsp {
  host: string;
  serve(path: string, answer: { status?: number; type?: string; body: string }): string;
  close(): Promise<void>;
}

async function startForeignPsp(keySet: object, port: number): Promise<ForeignPsp> {
  const { key, cert } = testCertificate();
  const answers = new Map<string, { status?: number; type?: string; body: string }>([['/jwks.json', { type: 'application/json', body: JSON.stringify(keySet) }]]);
  const server: Server = createServer({ key, cert }, (req, res) => {
    const answer = answers.get(req.url ?? '') ?? { status: 404, body: '{}' };
    res.writeHead(answer.status ?? 200, { 'content-type': answer.type ?? 'application/jose' }).end(answer.body);
  });
  await new Promise<void>((r) => server.listen(port, '127.0.0.1', r));
  const host = `127.0.0.1:${port}`;
  return {
    host,
    serve(path, answer) {
      answers.set(path, answer);
      return `${host}${path}`;
    },
    close: () => new Promise((r) => server.close(() => r())),
  };
}

const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
function es256(privateKey: KeyObject, header: object, payload: object): string {
  const input = `${b64(header)}.${b64(payload)}`;
  return `${input}.${sign('sha256', Buffer.from(input), { key: privateKey, dsaEncoding: 'ieee-p1363' }).toString('base64url')}`;
}

describe('paying another institution\'s charge', () => {
  const signing = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const stranger = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
  let psp: ForeignPsp;
  beforeAll(async () => {
    psp = await startForeignPsp({
      keys: [
        { ...signing.publicKey.export({ format: 'jwk' }), kid: 'psp-ec', alg: 'ES256', use: 'sig' },
        { ...rsa.publicKey.export({ format: 'jwk' }), kid: 'psp-rsa', alg: 'PS256', use: 'sig' },
      ],
    }, pspPort);
  });
  afterAll(() => psp?.close());

  const cob = (overrides: Record<string, unknown> = {}) => ({
    txid: `F${randomUUID().replaceAll('-', '')}`.slice(0, 30),
    revisao: 0,
    calendario: { criacao: new Date().toISOString(), expiracao: 3600 },
    status: 'ATIVA',
    valor: { original: '12.50' },
    chave: 'recebimentos@lojaexterna.example',
    ...overrides,
  });
  const header = (overrides: Record<string, unknown> = {}) => ({ alg: 'ES256', kid: 'psp-ec', jku: `https://${psp.host}/jwks.json`, ...overrides });
  const codeAt = (path: string, jws: string) => buildBrCode({ url: psp.serve(path, { body: jws }), merchantName: 'Loja Externa', merchantCity: 'Recife', amountCents: 1250n });

  test('a charge validly signed by its institution is paid to its key, like a static code', async () => {
    const before = await balanceOf(alice.account.id);
    const res = await scan(alice, codeAt('/cob/valid', es256(signing.privateKey, header(), cob())));
    expect(res.status).toBe(201);
    expect(await balanceOf(alice.account.id)).toBe(before - 1250n - QR_FEE);
    const posted = await payoutIn(alice, res.body.payout.payoutId, 'POSTED');
    expect(posted.metadata.beneficiary).toMatchObject({ pixKey: 'recebimentos@lojaexterna.example', pixKeyType: 'EMAIL', ispb: '99999999' });
  });

  test('PS256 (RSA-PSS) signatures are verified too', async () => {
    const input = `${b64(header({ alg: 'PS256', kid: 'psp-rsa' }))}.${b64(cob())}`;
    const signature = sign('sha256', Buffer.from(input), { key: rsa.privateKey, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: 32 }).toString('base64url');
    expect((await scan(alice, codeAt('/cob/rsa', `${input}.${signature}`))).status).toBe(201);
  });

  test.each([
    ['altered after signing (tampered)', () => {
      const [h, , s] = es256(signing.privateKey, header(), cob()).split('.');
      return `${h}.${b64(cob({ valor: { original: '0.01' } }))}.${s}`;
    }, 422, 'QR_SIGNATURE_INVALID'],
    ['signed by a key its institution does not publish (foreign-signed)', () => es256(stranger.privateKey, header({ kid: 'psp-stranger' }), cob()), 422, 'QR_SIGNATURE_INVALID'],
    ['signed by another key under a published kid', () => es256(stranger.privateKey, header(), cob()), 422, 'QR_SIGNATURE_INVALID'],
    ["naming a key set on another host (the platform's)", () => es256(stranger.privateKey, header({ jku: `https://127.0.0.1:${new URL(platform.holderUrl).port}/pix/jwks.json` }), cob()), 422, 'QR_SIGNATURE_INVALID'],
    ['with an algorithm outside the Pix rules', () => es256(signing.privateKey, header({ alg: 'HS256' }), cob()), 422, 'QR_SIGNATURE_INVALID'],
    ['unsigned (alg none, an empty signature)', () => `${b64(header({ alg: 'none' }))}.${b64(cob())}.`, 422, 'QR_SIGNATURE_INVALID'],
    ['whose amount the payer may change (modalidadeAlteracao 1)', () => es256(signing.privateKey, header(), cob({ valor: { original: '12.50', modalidadeAlteracao: 1 } })), 422, 'QR_AMOUNT_CHANGE_NOT_SUPPORTED'],
    ['expired, though validly signed', () => es256(signing.privateKey, header(), cob({ calendario: { criacao: new Date(Date.now() - 7200_000).toISOString(), expiracao: 3600 } })), 409, 'CHARGE_EXPIRED'],
    ['removed by its receiver', () => es256(signing.privateKey, header(), cob({ status: 'REMOVIDA_PELO_USUARIO_RECEBEDOR' })), 409, 'CHARGE_REMOVED'],
    ['without a key', () => es256(signing.privateKey, header(), cob({ chave: undefined })), 422, 'QR_PAYLOAD_INVALID'],
    ['that is not a JWS', () => '<html>charge</html>', 422, 'QR_PAYLOAD_INVALID'],
  ])('a payload %s is refused and nothing moves', async (_case, jws, status, code) => {
    const before = await balanceOf(alice.account.id);
    const res = await scan(alice, codeAt(`/cob/${randomUUID()}`, jws()));
    expect(res.status).toBe(status);
    expect(res.body.code).toBe(code);
    expect(res.body.message).toEqual(expect.any(String));
    expect(await balanceOf(alice.account.id)).toBe(before);
  });

  test("the platform's own signed payload replayed from another host is refused: its key set is not that host's", async () => {
    const charge = await createCharge(bob, 1250);
    const genuine = await (await fetch(`${platform.holderUrl}/pix/cob/${charge.txid}`)).text();
    const res = await scan(alice, codeAt('/cob/replayed', genuine));
    expect(res.status).toBe(422);
    expect(res.body.code).toBe('QR_SIGNATURE_INVALID');
    expect((await readCharge(bob, charge.chargeId)).body.status).toBe('ACTIVE');
  });

  test('a location that answers 404 is 422 QR_CHARGE_NOT_FOUND', async () => {
    const code = buildBrCode({ url: `${psp.host}/cob/nothing-here`, merchantName: 'Loja Externa', merchantCity: 'Recife' });
    const res = await scan(alice, code, { amount: 1 });
    expect(res.status).toBe(422);
    expect(res.body.code).toBe('QR_CHARGE_NOT_FOUND');
  });

  test('a fixed amount (modalidadeAlteracao 0, as a number or a digit string) is paid as before', async () => {
    for (const modalidadeAlteracao of [0, '0']) {
      const res = await scan(alice, codeAt(`/cob/${randomUUID()}`, es256(signing.privateKey, header(), cob({ valor: { original: '12.50', modalidadeAlteracao } }))));
      expect(res.status).toBe(201);
    }
  });

  test('outside the sandbox the provider reads other hosts through the address guard, on port 443 only; no connection is attempted otherwise', async () => {
    const guarded = pixDocumentFetcher({ publicBaseUrl: 'https://bank.example.com', allowedHosts: [], publicHosts: true });
    const read = (url: string) => guarded(new URL(url));
    expect(await read('https://127.0.0.1/jwks.json')).toEqual({ ok: false, error: '127.0.0.1 is a private or reserved address' });
    expect(await read('https://[::ffff:7f00:1]/jwks.json')).toEqual({ ok: false, error: '[::ffff:7f00:1] is a private or reserved address' });
    expect(await read('https://localhost/jwks.json')).toEqual({ ok: false, error: 'localhost could not be reached: it resolves to a private or reserved address' });
    expect(await read(`https://${psp.host}/jwks.json`)).toEqual({ ok: false, error: `${psp.host} is not read: charges are read on the https port (443) only` });
    expect(await read('https://93.184.216.34:5432/')).toEqual({ ok: false, error: '93.184.216.34:5432 is not read: charges are read on the https port (443) only' });
  });
});

describe("the locations the platform reads, and how long it waits", () => {
  const codeFor = (url: string) => buildBrCode({ url, merchantName: 'Loja', merchantCity: 'Natal' });
  const holderPort = () => new URL(platform.holderUrl).port;

  test.each([
    ['a query', (location: string) => `${location}?x=1`],
    ['a trailing slash', (location: string) => `${location}/`],
    ['a fragment', (location: string) => `${location}#x`],
    ['a doubled slash', (location: string) => location.replace('/pix/', '//pix/')],
    ['a dot segment', (location: string) => location.replace('/pix/cob/', '/pix/x/../cob/')],
    ['the host in another IPv4 spelling', (location: string) => location.replace('127.0.0.1', '127.1')],
    ['the port with a leading zero', (location: string) => location.replace(`:${holderPort()}/`, `:0${holderPort()}/`)],
  ])("an altered location of the platform's own charge (%s) is 422 QR_LOCATION_INVALID: nothing moves, the charge stays unpaid", async (_case, alter) => {
    const charge = await createCharge(bob, 777);
    const location = parseBrCode(charge.brCode).url!;
    const before = await balanceOf(alice.account.id);
    const res = await scan(alice, codeFor(alter(location)), { amount: 7.77 });
    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({ code: 'QR_LOCATION_INVALID', message: expect.stringContaining(`${location.replace(charge.txid, '<txid>')}`) });
    expect(await balanceOf(alice.account.id)).toBe(before);
    expect((await readCharge(bob, charge.chargeId)).body.status).toBe('ACTIVE');
    // The exact location still pays the charge, to its receiver.
    expect((await scan(alice, charge.brCode)).status).toBe(201);
    await waitFor(async () => ((await readCharge(bob, charge.chargeId)).body.status === 'PAID' ? true : undefined), 30_000, 'the charge to be paid');
  });

  test('in the sandbox, a location on any other host or port is refused before connecting, with one message whatever is there', async () => {
    const connections: Socket[] = [];
    const listening = createTcpServer((socket) => connections.push(socket.destroy()));
    const openPort = await freePort();
    await new Promise<void>((r) => listening.listen(openPort, '127.0.0.1', r));
    const databasePort = new URL(process.env.TEST_DATABASE_URL!).port;
    const before = await balanceOf(alice.account.id);
    try {
      for (const host of [`127.0.0.1:${openPort}`, `127.0.0.1:${databasePort}`, '127.0.0.1:1', `localhost:${holderPort()}`, '10.0.0.1', 'psp.example.com']) {
        const res = await scan(alice, codeFor(`${host}/cob/7d9f0335dcc44b54bf90dbd61d36906`), { amount: 1 });
        expect(res.status).toBe(422);
        expect(res.body).toEqual({
          code: 'QR_LOCATION_UNAVAILABLE',
          message: `The charge's location could not be read: ${host} is not read by this sandbox: only this platform's own charges and the hosts its operator allows are`,
        });
      }
      expect(connections).toHaveLength(0);
      expect(await balanceOf(alice.account.id)).toBe(before);
    } finally {
      await new Promise((r) => listening.close(r));
    }
  });

  describe('an allowed host whose TLS never succeeds', () => {
    let behaviour: 'silent' | 'plain http' = 'silent';
    const sockets = new Set<Socket>();
    const stall = createTcpServer((socket) => {
      sockets.add(socket);
      // Silent: accepts, reads the TLS ClientHello and never answers it. Plain HTTP: answers it with no TLS at all.
      if (behaviour === 'plain http') socket.end('HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok');
    });
    beforeAll(() => new Promise<void>((r) => stall.listen(stallPort, '127.0.0.1', r)));
    afterAll(() => {
      for (const socket of sockets) socket.destroy();
      return new Promise((r) => stall.close(r));
    });

    test('a handshake that never completes answers 422 QR_LOCATION_UNAVAILABLE within the documented 5 s, not 10', async () => {
      behaviour = 'silent';
      const started = Date.now();
      const res = await scan(alice, codeFor(`127.0.0.1:${stallPort}/cob/stalled`), { amount: 1 });
      const elapsed = Date.now() - started;
      expect(res.status).toBe(422);
      expect(res.body).toEqual({ code: 'QR_LOCATION_UNAVAILABLE', message: `The charge's location could not be read: 127.0.0.1:${stallPort} gave no answer within 5 s` });
      expect(elapsed).toBeGreaterThanOrEqual(4900);
      expect(elapsed).toBeLessThan(7000);
    });

    test("a server that does not speak TLS is told in the platform's words, without OpenSSL's", async () => {
      behaviour = 'plain http';
      const res = await scan(alice, codeFor(`127.0.0.1:${stallPort}/cob/plain`), { amount: 1 });
      expect(res.status).toBe(422);
      expect(res.body).toEqual({
        code: 'QR_LOCATION_UNAVAILABLE',
        message: `The charge's location could not be read: 127.0.0.1:${stallPort} could not be reached: the secure connection (TLS) failed: a certificate not trusted, or not TLS`,
      });
    });
  });

  test(`GET /pix/cob/:txid allows ${LOCATION_MAX_PER_MINUTE} calls a minute per client address, then 429 RATE_LIMITED; other addresses are not affected`, async () => {
    const charge = await createCharge(carol, 100);
    const from = (address: string, txid: string) => http('GET', `${platform.holderUrl}/pix/cob/${txid}`, { headers: { 'x-forwarded-for': address } });
    const unknown = 'Z'.repeat(32);
    const prober = `203.0.113.${1 + Math.floor(Math.random() * 250)}`;
    // Within the limit, known and unknown txids answer as usual.
    const allowed = await Promise.all(Array.from({ length: LOCATION_MAX_PER_MINUTE }, (_, i) => from(prober, i % 2 === 0 ? unknown : charge.txid)));
    expect(new Set(allowed.map((r) => r.status))).toEqual(new Set([200, 404]));
    // Past it, 429; a minute's window may have turned meanwhile, so at most one more window's worth is sent.
    let limited = null;
    for (let i = 0; i <= LOCATION_MAX_PER_MINUTE && !limited; i++) {
      const res = await from(prober, i % 2 === 0 ? unknown : charge.txid);
      if (res.status === 429) limited = res;
      else expect([200, 404]).toContain(res.status);
    }
    expect(limited?.body).toMatchObject({ code: 'RATE_LIMITED', message: expect.any(String) });
    expect((await from('203.0.113.254', charge.txid)).status).toBe(200);
  });
});
