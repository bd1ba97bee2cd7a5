import { execFile } from 'node:child_process';
import { randomInt, randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { loadConfigOrExit, type Config } from '../../src/config.ts';
import { request } from './http.ts';
import { seconds, since } from './stats.ts';

/**
 * What the bench scripts share: where the running platform listens (the same environment `npm start` reads), the
 * operator command line, and holders made through the real HTTP registration and sandbox KYC.
 */
export const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
export const config: Config = loadConfigOrExit();
export const holderUrl = `http://${config.HOST}:${config.PORT}`;
export const apiUrl = `http://${config.HOST}:${config.API_PORT}`;
export const PASSWORD = 'bench-password-42';

export const say = (line: string) => process.stdout.write(`${line}\n`);

/** Runs a setup step and prints how long it took. */
export async function timed<T>(label: string, fn: () => Promise<T>): Promise<T> {
  const start = performance.now();
  const result = await fn();
  say(`  ${label.padEnd(48)} ${seconds(since(start))}`);
  return result;
}

/** A pg pool on the platform's database, for what the HTTP interface does not show (Pix account ids, checks). */
export const openPool = (max = 4) => new pg.Pool({ connectionString: config.DATABASE_URL, max });

/** Fails early, with a hint, when nothing answers on the holder or integration API. */
export async function assertPlatformUp(): Promise<void> {
  for (const url of [`${holderUrl}/health`, `${apiUrl}/health`]) {
    try {
      await request('GET', url);
    } catch {
      throw new Error(`nothing answers at ${url}: start the platform first (npm start) with the same environment`);
    }
  }
}

/** Runs `npm run admin -- …` as its own process (node src/admin/cli.ts) and returns the JSON it printed. */
export function admin(...args: string[]): Promise<any> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, ['src/admin/cli.ts', ...args], { cwd: repoRoot, env: process.env }, (error, stdout, stderr) => {
      if (error) return reject(new Error(`admin ${args[0]} failed: ${stderr.trim() || error.message}`));
      resolve(JSON.parse(stdout.trim().split('\n').pop()!));
    });
  });
}

/** Runs `fn` over `items` with at most `limit` calls in flight; results keep the input order. */
export async function mapLimit<T, R>(items: readonly T[], limit: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const lane = async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await fn(items[i]!, i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
  return results;
}

/** A random CPF with valid check digits (registration validates them). */
export function newCpf(): string {
  const base = Array.from({ length: 9 }, () => randomInt(10));
  if (base.every((d) => d === base[0])) base[0] = (base[0]! + 1) % 10;
  const digit = (ds: number[]) => {
    const rest = ds.reduce((sum, d, i) => sum + d * (ds.length + 1 - i), 0) % 11;
    return rest < 2 ? 0 : 11 - rest;
  };
  const first = digit(base);
  return [...base, first, digit([...base, first])].join('');
}

export interface Holder {
  document: string;
  holderId: string;
  requisitionId: number;
}

const tenantHeaders = (tenantId: string, token?: string): Record<string, string> => ({
  'x-tenant-id': tenantId,
  ...(token ? { authorization: `Bearer ${token}` } : {}),
});

/** POST /persons, then the sandbox KYC approval: the holder ends ACTIVE with an APPROVED account. */
export async function onboardHolder(tenantId: string, name: string): Promise<Holder> {
  const document = newCpf();
  const reg = await request('POST', `${holderUrl}/persons`, {
    body: { name, email: `${randomUUID()}@bench.example`, password: PASSWORD, document },
    headers: tenantHeaders(tenantId),
  });
  if (reg.status !== 201) throw new Error(`registration failed: ${reg.status} ${JSON.stringify(reg.body)}`);
  const requisitionId = reg.body.person.onboardingRequisitionId as number;
  const kyc = await request('POST', `${holderUrl}/onboarding/${requisitionId}/complete`, { body: {} });
  // 202: the worker has not applied the decision within the endpoint's wait; waitForApprovedAccounts covers it.
  if (kyc.status !== 200 && kyc.status !== 202) throw new Error(`KYC failed: ${kyc.status} ${JSON.stringify(kyc.body)}`);
  return { document, holderId: reg.body.person.id, requisitionId };
}

/**
 * POST /authenticate/clients with the tenant key: a holder's 24-hour client token. A client token of a PIN-exempt
 * tenant writes without the PIN, so a payment does not pay the PIN's argon2 check.
 */
export async function clientToken(tenantId: string, tenantKey: string, document: string): Promise<string> {
  const res = await request('POST', `${holderUrl}/authenticate/clients`, { body: { document }, headers: { ...tenantHeaders(tenantId), 'x-tenant-api-key': tenantKey } });
  if (res.status !== 200) throw new Error(`client authentication failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.token;
}

/** POST /authenticate: a holder JWT and the holder's accounts (section 2.2). */
export async function authenticate(tenantId: string, document: string): Promise<{ token: string; accounts: any[] }> {
  const res = await request('POST', `${holderUrl}/authenticate`, { body: { document, password: PASSWORD }, headers: tenantHeaders(tenantId) });
  if (res.status !== 200) throw new Error(`authenticate failed: ${res.status} ${JSON.stringify(res.body)}`);
  return { token: res.body.token, accounts: res.body.accounts };
}

/** Funds an account through the sandbox incoming Pix: the real ledger path, with the settlement account's debit. */
export async function fund(tenantId: string, accountId: string, amountCents: bigint): Promise<void> {
  const res = await request('POST', `${holderUrl}/sandbox/pix/incoming`, {
    body: { accountId, amountCents: amountCents.toString(), payerName: 'Pagador Bench', payerDocument: newCpf() },
    headers: tenantHeaders(tenantId),
  });
  if (res.status !== 201) throw new Error(`funding failed: ${res.status} ${JSON.stringify(res.body)}`);
}

/**
 * Funds every account by sandbox incoming Pix, 4 at a time. The tenant's first Pix creates its SETTLEMENT and
 * FEE_REVENUE accounts, and the api caches their ids before that transaction commits: first Pix arriving in parallel
 * fail with 500 "account … was not locked". So one first, alone, then the rest in parallel.
 */
export async function fundAccounts<A extends { id: string }>(tenantId: string, accounts: readonly A[], amountOf: (a: A) => bigint): Promise<void> {
  await fund(tenantId, accounts[0]!.id, amountOf(accounts[0]!));
  await mapLimit(accounts.slice(1), 4, (a) => fund(tenantId, a.id, amountOf(a)));
}

export interface BenchAccount {
  id: string;
  holderId: string;
  agency: string;
  number: string;
  pixAccountId: string;
}

/** Registrations hash a password with argon2 on the api's thread pool (4 threads): more in flight only queues. */
const REGISTRATION_PARALLELISM = 8;

/** `count` holders named `<name> <i>` registered and through KYC (timed), with their APPROVED accounts, in registration order. */
export async function registerHolders(pool: pg.Pool, tenantId: string, count: number, name: string): Promise<{ holder: Holder; account: BenchAccount }[]> {
  const holders = await timed(`registration + sandbox KYC (${count}, ${REGISTRATION_PARALLELISM} at once)`, () =>
    mapLimit(Array.from({ length: count }), REGISTRATION_PARALLELISM, (_, i) => onboardHolder(tenantId, `${name} ${i}`)),
  );
  const byHolder = await waitForApprovedAccounts(pool, tenantId, count);
  return holders.map((holder) => ({ holder, account: byHolder.get(holder.holderId)! }));
}

/**
 * The tenant's holder accounts once all `count` are APPROVED. Read from the database: the HTTP interface does not
 * show `pixAccountId` (API keys are scoped by it), and one query replaces an `/authenticate` (argon2) per holder.
 */
export async function waitForApprovedAccounts(pool: pg.Pool, tenantId: string, count: number, timeoutMs = 60_000): Promise<Map<string, BenchAccount>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { rows } = await pool.query<BenchAccount>(
      `select a.id, a.holder_id as "holderId", a.agency, a.number, a.pix_account_id as "pixAccountId"
         from account a join holder h on h.id = a.holder_id
        where a.tenant_id = $1 and a.kind = 'HOLDER' and a.status = 'APPROVED' and h.status = 'ACTIVE' and h.onboarding_step = 'DONE'`,
      [tenantId],
    );
    if (rows.length >= count) return new Map(rows.map((r) => [r.holderId, r]));
    if (Date.now() > deadline) throw new Error(`only ${rows.length} of ${count} accounts approved after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 250));
  }
}
