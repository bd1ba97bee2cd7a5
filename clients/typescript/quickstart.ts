import { execFileSync } from 'node:child_process';
import { randomInt, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { Webhook } from 'standardwebhooks';
import { createHolderClient, createIntegrationClient, type WebhookEvent } from './src/index.ts';

/**
 * The quickstart of clients/typescript/README.md, step by step against a platform with the sandbox on: two holders
 * register and finish KYC, one is funded and sends the other a TEV with an Idempotency-Key, both sides read it back,
 * the sender pages through its statement, the receiver's webhook delivery is verified with `standardwebhooks`, and the
 * sender schedules a monthly payment whose first occurrence is paid a few seconds later, then cancels the rest, and
 * pays a small batch.
 */

export interface QuickstartEnvironment {
  /** `{base_url}` and `{api_url}`. */
  holderUrl: string;
  apiUrl: string;
  /** The tenant, from the operator (`npm run admin -- tenant:create --name …`). */
  tenantId: string;
  /** The operator issues an integration API key for these Pix accounts (`npm run admin -- api-key:create …`). */
  issueApiKey(pixAccountIds: string[]): Promise<string>;
  /**
   * An HTTPS URL the platform can reach, and the requests it receives there, one at a time. Without one, no webhook is
   * registered and the delivery (step 7) is skipped.
   */
  webhookReceiver?: WebhookReceiver;
  /** A CPF (11 digits, valid check digits) for each of the two holders. */
  documents: [string, string];
  fetch?: typeof fetch;
  log?(line: string): void;
}

export interface WebhookReceiver {
  url: string;
  nextDelivery(): Promise<{ headers: Record<string, string>; body: string }>;
}

/** What `data` of an answer is, or an error naming the step and the platform's error body. */
function expectData<T>(step: string, answer: { data?: T; error?: unknown; response: Response }): T {
  if (answer.data === undefined) throw new Error(`${step}: ${answer.response.status} ${JSON.stringify(answer.error)}`);
  return answer.data;
}

const PASSWORD = 's3nha-forte-42';
const PIN = '2580';

export async function runQuickstart(env: QuickstartEnvironment) {
  const log = env.log ?? ((line: string) => process.stdout.write(`${line}\n`));
  const transport = env.fetch ? { fetch: env.fetch } : {};

  // 1. A holder registers, finishes KYC in the sandbox, sets a PIN and authenticates: its accounts carry pixAccountId.
  async function onboard(name: string, document: string) {
    const holder = createHolderClient({ baseUrl: env.holderUrl, tenantId: env.tenantId, ...transport });
    const email = `${randomUUID()}@example.com`;
    const registered = expectData('register', await holder.POST('/persons', { body: { name, document, email, password: PASSWORD } }));
    holder.setToken(registered.token);
    const requisitionId = String(registered.person.onboardingRequisitionId);
    const kyc = expectData('complete KYC', await holder.POST('/onboarding/{requisitionId}/complete', { params: { path: { requisitionId } }, body: { decision: 'APPROVED' } }));
    if (kyc.onboardingStep !== 'DONE') throw new Error(`KYC is ${kyc.onboardingStep}, not DONE`);
    expectData('create PIN', await holder.POST('/passwords/create-pin', { body: { pin: PIN } }));
    const session = expectData('authenticate', await holder.POST('/authenticate', { body: { document, password: PASSWORD } }));
    holder.setToken(session.token);
    const account = session.accounts[0]!;
    log(`${name}: account ${account.agency}/${account.number}, pixAccountId ${account.pixAccountId}`);
    return { holder, account };
  }
  const maria = await onboard('Maria da Silva', env.documents[0]);
  const joao = await onboard('João Souza', env.documents[1]);

  // 2. Maria's account is funded with a sandbox incoming Pix of R$ 100.00.
  const funded = expectData(
    'fund',
    await maria.holder.POST('/sandbox/pix/incoming', { body: { accountId: maria.account.id, amountCents: '10000', payerName: 'Pagador Sandbox', payerDocument: '11144477735' } }),
  );
  log(`funded: balance ${funded.balanceAfterCents} cents`);

  // 3. The integrator gets an API key for both Pix accounts and registers João's webhook endpoint.
  const integration = createIntegrationClient({ baseUrl: env.apiUrl, apiKey: await env.issueApiKey([maria.account.pixAccountId, joao.account.pixAccountId]), ...transport });
  const receiver = env.webhookReceiver;
  const endpoint = receiver
    ? expectData(
        'register webhook',
        await integration.POST('/v1/pix-accounts/{accountId}/webhooks', {
          params: { path: { accountId: joao.account.pixAccountId }, header: { 'idempotency-key': randomUUID() } },
          body: { url: receiver.url, events: ['tev.in.received'], authToken: `quickstart-${randomUUID()}` },
        }),
      )
    : null;
  log(endpoint ? `webhook ${endpoint.id} registered for ${endpoint.events.join(', ')}` : 'no webhook receiver: no endpoint registered, step 7 skipped');

  // 4. Maria sends João R$ 10.50 with an Idempotency-Key; sending it again answers the same transfer.
  const idempotencyKey = randomUUID();
  const send = () =>
    integration.POST('/v1/tev', {
      params: { header: { 'idempotency-key': idempotencyKey, 'x-pix-account-id': maria.account.pixAccountId } },
      body: { destinationBranch: joao.account.agency, destinationAccount: joao.account.number, amountCents: '1050', description: 'Quickstart' },
    });
  const transfer = async (step: string) => {
    const answer = expectData(step, await send());
    // A 202 would mean the account is under dual approval: the transfer waits for its approver.
    if (!('tevId' in answer)) throw new Error(`${step}: held for approval ${answer.approvalRequestId}`);
    return answer;
  };
  const sent = await transfer('send TEV');
  const retried = await transfer('send TEV again');
  if (retried.tevId !== sent.tevId) throw new Error('the retry named another transfer');
  log(`TEV ${sent.tevId}: ${sent.kind}, fee ${sent.feeCents} cents`);

  // 5. Both sides read it back: each sees its own direction and counterpart.
  const readBy = async (pixAccountId: string) =>
    expectData('read TEV', await integration.GET('/v1/tev/{id}', { params: { path: { id: sent.tevId }, header: { 'x-pix-account-id': pixAccountId } } }));
  const [outSide, inSide] = [await readBy(maria.account.pixAccountId), await readBy(joao.account.pixAccountId)];
  log(`read back: ${outSide.direction} to ${outSide.destination?.account}, ${inSide.direction} from ${inSide.origin?.account}`);

  // 6. Maria pages through her statement, one transaction a page, following nextCursor.
  const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);
  const statement: { description: string; amount: number; credit: boolean }[] = [];
  let cursor: string | undefined;
  do {
    const page = expectData(
      'statement',
      await maria.holder.GET('/accounts/{accountId}/transactions', {
        params: { path: { accountId: maria.account.id }, query: { startDate: day(-1), endDate: day(1), limit: 1, ...(cursor ? { cursor } : {}) } },
      }),
    );
    statement.push(...page.transactions);
    cursor = page.pagination.nextCursor ?? undefined;
  } while (cursor);
  log(`statement: ${statement.map((t) => `${t.credit ? '+' : '-'}${t.amount} ${t.description}`).join('; ')}`);

  // 7. João's endpoint receives tev.in.received; the official Standard Webhooks library checks its signature.
  let event: WebhookEvent | null = null;
  if (receiver && endpoint) {
    const delivery = await receiver.nextDelivery();
    event = new Webhook(endpoint.signingSecret).verify(delivery.body, delivery.headers) as WebhookEvent;
    if (event.event !== 'tev.in.received' || event.data.tevTransferId !== sent.tevId) throw new Error(`unexpected delivery ${delivery.body}`);
    log(`webhook ${delivery.headers['webhook-id']} verified: ${event.event} of ${event.data.amountCents} cents`);
  }

  // 8. Maria schedules a monthly TEV of R$ 5.00 to João, the first a few seconds from now (São Paulo date and time):
  //    the platform pays it when due, through the normal payment path, once. She reads it, then cancels the rest.
  const first = saoPauloClock(new Date(Date.now() + 4_000));
  const schedules = '/v1/pix-accounts/{accountId}/scheduled-payments/{scheduleId}' as const;
  const scheduled = expectData(
    'schedule a payment',
    await integration.POST('/v1/pix-accounts/{accountId}/scheduled-payments', {
      params: { path: { accountId: maria.account.pixAccountId }, header: { 'idempotency-key': randomUUID() } },
      body: { kind: 'TEV', branch: joao.account.agency, account: joao.account.number, amountCents: '500', description: 'Mensalidade', ...first, recurrence: { frequency: 'MONTHLY', count: 3 } },
    }),
  );
  log(`scheduled ${scheduled.id}: ${scheduled.occurrences.map((o) => o.date).join(', ')} at ${scheduled.time}`);
  const path = { accountId: maria.account.pixAccountId, scheduleId: scheduled.id };
  let paid = scheduled.occurrences[0]!;
  for (let tries = 0; paid.status === 'SCHEDULED' || paid.status === 'RUNNING'; tries++) {
    if (tries === 60) throw new Error(`the first occurrence of ${scheduled.id} is still ${paid.status}`);
    await new Promise((resolve) => setTimeout(resolve, 500));
    paid = expectData('read the schedule', await integration.GET(schedules, { params: { path } })).occurrences[0]!;
  }
  log(`first occurrence ${paid.date}: ${paid.status}, TEV ${paid.tevId}`);
  const cancelled = expectData('cancel the schedule', await integration.DELETE(schedules, { params: { path } }));
  log(`schedule ${cancelled.status}: ${cancelled.occurrences.map((o) => o.status).join(', ')}`);

  // 9. Maria pays João twice more as one batch, one item to an account that does not exist: the answer (202) gives each
  //    item's validation; the valid one is paid as a TEV of its own, the invalid one never; the batch then ends FINISHED.
  const created = expectData(
    'create batch',
    await integration.POST('/v1/pix-accounts/{accountId}/batches', {
      params: { path: { accountId: maria.account.pixAccountId }, header: { 'idempotency-key': randomUUID() } },
      body: {
        items: [
          { kind: 'TEV', externalRef: 'quickstart-1', amountCents: '250', branch: joao.account.agency, account: joao.account.number, description: 'Lote quickstart' },
          { kind: 'TEV', externalRef: 'quickstart-2', amountCents: '250', branch: joao.account.agency, account: '99999999' },
        ],
      },
    }),
  );
  log(`batch ${created.batchId}: ${created.items.map((i) => `${i.externalRef} ${i.valid ? 'valid' : i.reason}`).join(', ')}`);
  const readBatch = async () =>
    expectData('read batch', await integration.GET('/v1/pix-accounts/{accountId}/batches/{batchId}', { params: { path: { accountId: maria.account.pixAccountId, batchId: created.batchId } } }));
  let batch = await readBatch();
  for (const deadline = Date.now() + 30_000; batch.finishedAt === null; batch = await readBatch()) {
    if (Date.now() > deadline) throw new Error(`batch ${created.batchId} is still ${batch.status} after 30 s`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  const items = expectData(
    'batch items',
    await integration.GET('/v1/pix-accounts/{accountId}/batches/{batchId}/items', { params: { path: { accountId: maria.account.pixAccountId, batchId: created.batchId } } }),
  ).items;
  log(`batch ${batch.status}: ${items.map((i) => `${i.externalRef} ${i.status}`).join(', ')}`);

  return { tev: sent, outSide, inSide, statement, event, scheduled: cancelled, batch, batchItems: items };
}

/** A moment as a São Paulo date and time of day (with seconds): how a scheduled payment's time is written. */
function saoPauloClock(at: Date): { date: string; time: string } {
  const format = new Intl.DateTimeFormat('en-CA', {
    timeZone: 'America/Sao_Paulo',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
    hourCycle: 'h23',
  });
  const part = Object.fromEntries(format.formatToParts(at).map((p) => [p.type, p.value]));
  return { date: `${part.year}-${part.month}-${part.day}`, time: `${part.hour}:${part.minute}:${part.second}` };
}

/** A CPF nobody registered yet, most likely: nine random digits and their two check digits. */
function randomCpf(): string {
  const digits = Array.from({ length: 9 }, () => randomInt(10));
  for (const length of [9, 10]) {
    const sum = digits.slice(0, length).reduce((acc, d, i) => acc + d * (length + 1 - i), 0);
    digits.push(sum % 11 < 2 ? 0 : 11 - (sum % 11));
  }
  return digits.join('');
}

/** An HTTPS receiver on 127.0.0.1 with the given key and certificate, answering 200 and handing over what arrives. */
async function localReceiver(keyFile: string, certFile: string): Promise<WebhookReceiver & { close(): void }> {
  const arrived: { headers: Record<string, string>; body: string }[] = [];
  const waiting: ((d: { headers: Record<string, string>; body: string }) => void)[] = [];
  const server = createServer({ key: readFileSync(keyFile), cert: readFileSync(certFile) }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      res.writeHead(200).end();
      const delivery = { headers: Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)])), body: Buffer.concat(chunks).toString('utf8') };
      const next = waiting.shift();
      if (next) next(delivery);
      else arrived.push(delivery);
    });
  });
  await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
  return {
    url: `https://127.0.0.1:${(server.address() as AddressInfo).port}/quickstart`,
    nextDelivery: () => new Promise((take) => (arrived.length > 0 ? take(arrived.shift()!) : waiting.push(take))),
    close: () => server.close(),
  };
}

/**
 * `node clients/typescript/quickstart.ts`, with the platform of this repository running (`npm start`): TENANT_ID names
 * the tenant; HOLDER_URL and API_URL default to `npm start`'s; the API key comes from the operator command line of this
 * repository. With WEBHOOK_TLS_KEY and WEBHOOK_TLS_CERT (PEM files for 127.0.0.1, the certificate trusted by the
 * platform through WEBHOOK_CA_FILE), a receiver on 127.0.0.1 takes the webhook delivery of step 7.
 */
async function main(): Promise<void> {
  const tenantId = process.env.TENANT_ID;
  if (!tenantId) throw new Error('Set TENANT_ID to a tenant of the platform: npm run admin -- tenant:create --name "Banco Azul"');
  const repository = fileURLToPath(new URL('../..', import.meta.url));
  // The operator command line prints one JSON object, on its last line.
  const operator = (args: string[]) => JSON.parse(execFileSync(process.execPath, ['src/admin/cli.ts', ...args], { cwd: repository, encoding: 'utf8' }).trim().split('\n').pop()!);
  const { WEBHOOK_TLS_KEY: keyFile, WEBHOOK_TLS_CERT: certFile } = process.env;
  const receiver = keyFile && certFile ? await localReceiver(keyFile, certFile) : undefined;
  try {
    await runQuickstart({
      holderUrl: process.env.HOLDER_URL ?? 'http://127.0.0.1:3000',
      apiUrl: process.env.API_URL ?? 'http://127.0.0.1:3001',
      tenantId,
      issueApiKey: async (pixAccountIds) => operator(['api-key:create', '--tenant', tenantId, ...pixAccountIds.flatMap((id) => ['--pix-account', id])]).key,
      ...(receiver ? { webhookReceiver: receiver } : {}),
      documents: [randomCpf(), randomCpf()],
    });
  } finally {
    receiver?.close();
  }
}

if (import.meta.main) await main();
