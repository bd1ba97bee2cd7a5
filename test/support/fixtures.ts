import { randomInt, randomUUID } from 'node:crypto';
import { adminOk } from './admin.ts';
import { http } from './http.ts';
import type { Platform } from './platform.ts';
import { waitFor } from './wait.ts';

export { waitFor };

/** What the fixtures use of a platform: its holder API and the environment its operator CLI runs with. */
type Reached = Pick<Platform, 'holderUrl' | 'env'>;

function withCheckDigits(base: number[], weights1: number[], weights2: number[]): string {
  const digit = (ds: number[], ws: number[]) => {
    const rest = ds.reduce((a, d, i) => a + d * ws[i]!, 0) % 11;
    return rest < 2 ? 0 : 11 - rest;
  };
  const first = digit(base, weights1);
  const second = digit([...base, first], weights2);
  return [...base, first, second].join('');
}

/** A random CPF with valid check digits. */
export function newCpf(): string {
  const base = Array.from({ length: 9 }, () => randomInt(10));
  if (base.every((d) => d === base[0])) base[0] = (base[0]! + 1) % 10;
  return withCheckDigits(base, [10, 9, 8, 7, 6, 5, 4, 3, 2], [11, 10, 9, 8, 7, 6, 5, 4, 3, 2]);
}

/** A random CNPJ (branch 0001) with valid check digits. */
export function newCnpj(): string {
  const base = [...Array.from({ length: 8 }, () => randomInt(10)), 0, 0, 0, 1];
  return withCheckDigits(base, [5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2], [6, 5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2]);
}

/** A receiver's document as a Pix payer sees it: a CPF masked `***.456.789-**` (4th to 9th digits), a CNPJ whole. */
export const shownToPixPayer = (document: string): string => (document.length === 11 ? `***.${document.slice(3, 6)}.${document.slice(6, 9)}-**` : document);

export const PASSWORD = 'correct-horse-42';
export const PIN = '2580';

export async function newTenant(platform: Reached, options: { pinExempt?: boolean; name?: string } = {}): Promise<string> {
  const args = ['tenant:create', '--name', options.name ?? `Tenant ${randomUUID().slice(0, 8)}`];
  if (options.pinExempt) args.push('--pin-exempt');
  return (await adminOk(platform.env, ...args)).tenantId;
}

export const tenantHeaders = (tenantId: string, token?: string): Record<string, string> => ({
  'x-tenant-id': tenantId,
  ...(token ? { authorization: `Bearer ${token}` } : {}),
});

export interface Registered {
  tenantId: string;
  document: string;
  password: string;
  token: string;
  holder: any;
  type: 'PERSON' | 'COMPANY';
}

export async function register(platform: Reached, tenantId: string, type: 'PERSON' | 'COMPANY' = 'PERSON', overrides: Record<string, string> = {}): Promise<Registered> {
  const document = overrides.document ?? (type === 'PERSON' ? newCpf() : newCnpj());
  const body = { name: type === 'PERSON' ? 'Maria da Silva' : 'Padaria Pão Quente LTDA', email: `${randomUUID()}@example.com`, password: PASSWORD, document, ...overrides };
  const res = await http('POST', `${platform.holderUrl}/${type === 'PERSON' ? 'persons' : 'companies'}`, { body, headers: tenantHeaders(tenantId) });
  if (res.status !== 201) throw new Error(`registration failed: ${res.status} ${JSON.stringify(res.body)}`);
  const holder = type === 'PERSON' ? res.body.person : res.body.company;
  return { tenantId, document, password: body.password, token: res.body.token, holder, type };
}

/** Completes KYC through the sandbox page's endpoint, as the holder's browser would. */
export async function completeKyc(platform: Reached, holder: { onboardingRequisitionId: number }, body: Record<string, string> = {}) {
  return http('POST', `${platform.holderUrl}/onboarding/${holder.onboardingRequisitionId}/complete`, { body });
}

/** A registered holder whose account the onboarding workflow has provisioned (still PENDING: KYC not done). */
export async function registeredWithAccount(platform: Reached, tenantId: string): Promise<Registered & { accountId: string }> {
  const r = await register(platform, tenantId);
  const accounts = await waitFor(async () => {
    const a = (await login(platform, r)).body.accounts;
    return a?.length ? a : undefined;
  }, 45_000, 'account provisioning');
  return { ...r, accountId: accounts[0].id };
}

export async function login(platform: Reached, r: { tenantId: string; document: string; password: string }) {
  return http('POST', `${platform.holderUrl}/authenticate`, { body: { document: r.document, password: r.password }, headers: tenantHeaders(r.tenantId) });
}

export interface Onboarded extends Registered {
  account: any;
  pin: string;
}

/** A holder through KYC, with a PIN and a fresh token: ready to move money. */
export async function onboarded(platform: Reached, tenantId: string, type: 'PERSON' | 'COMPANY' = 'PERSON'): Promise<Onboarded> {
  const r = await register(platform, tenantId, type);
  const kyc = await completeKyc(platform, r.holder, type === 'COMPANY' ? { partnerName: 'João Sócio', partnerDocument: newCpf() } : {});
  if (kyc.status !== 200) throw new Error(`KYC failed: ${kyc.status} ${JSON.stringify(kyc.body)}`);
  const pin = await http('POST', `${platform.holderUrl}/passwords/create-pin`, { body: { pin: PIN }, headers: tenantHeaders(tenantId, r.token) });
  if (pin.status !== 201) throw new Error(`create-pin failed: ${pin.status} ${JSON.stringify(pin.body)}`);
  const auth = await login(platform, r);
  if (auth.status !== 200) throw new Error(`login failed: ${auth.status} ${JSON.stringify(auth.body)}`);
  return { ...r, token: auth.body.token, holder: auth.body.entity, account: auth.body.accounts[0], pin: PIN };
}


/** Funds an account through the sandbox incoming Pix (the real ledger path). */
export async function fund(platform: Reached, tenantId: string, accountId: string, amountCents: number | string) {
  const res = await http('POST', `${platform.holderUrl}/sandbox/pix/incoming`, {
    body: { accountId, amountCents: String(amountCents), payerName: 'Pagador Sandbox', payerDocument: newCpf() },
    headers: tenantHeaders(tenantId),
  });
  if (res.status !== 201) throw new Error(`funding failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

/** An integration API key scoped to the given Pix accounts. */
export async function apiKey(platform: Reached, tenantId: string, ...pixAccountIds: string[]): Promise<string> {
  const args = ['api-key:create', '--tenant', tenantId, ...pixAccountIds.flatMap((p) => ['--pix-account', p])];
  return (await adminOk(platform.env, ...args)).key;
}

/** The holder's first account as the operator sees it (`account:show`): its ids in every form. */
async function shownAccount(platform: Reached, tenantId: string, document: string): Promise<{ id: string; pixAccountId: string; coreAccountId: string }> {
  return (await adminOk(platform.env, 'account:show', '--tenant', tenantId, '--document', document)).accounts[0];
}

export const pixAccountIdOf = async (platform: Reached, tenantId: string, document: string): Promise<string> => (await shownAccount(platform, tenantId, document)).pixAccountId;

/** The internal account id (a cuid) that payouts and events name, unlike the account's UUID. */
export const coreAccountIdOf = async (platform: Reached, tenantId: string, document: string): Promise<string> => (await shownAccount(platform, tenantId, document)).coreAccountId;
