import type http from 'node:http';
import type { EntityManager } from '@mikro-orm/postgresql';
import { Account } from '../accounts/entities.ts';
import { Holder } from '../identity/entities.ts';
import { DomainError } from '../shared/errors.ts';
import { httpExchange, keepAliveAgentFor } from '../shared/http-exchange.ts';
import { Tenant } from '../tenants/entities.ts';
import { PLATFORM_ISPB } from '../shared/institution.ts';
import { findChargeByTxid } from './charge-store.ts';
import { pixDocumentFetcher } from './document-client.ts';
import type { PixKeyType } from './keys.ts';
import type { Beneficiary, PayoutSubmission, PixProvider, PixReturn, ProviderPayoutState } from './provider.ts';
import { txidOfOwnLocation } from './public-urls.ts';

/**
 * The platform's only way to its Pix provider (PSP): `PixProvider` over HTTP, to the PSP's API at `PIX_PROVIDER_URL`
 * with the bearer credential `PIX_PROVIDER_API_KEY`. A real PSP's integration would replace this module. Every call it
 * makes is idempotent (a payout by its payoutId, a return by its end-to-end id), so a network error or a 5xx is tried
 * again within the call, and then thrown: the Temporal activity that called retries it later, so a PSP that is down
 * delays a payout without losing it.
 */

export interface HttpProviderOptions {
  url: string;
  apiKey: string;
  /** One request's whole exchange. */
  timeoutMs: number;
  /** The platform's public base: a charge whose location is served here is the platform's own. */
  publicBaseUrl: string;
  /** Hosts whose documents are read whatever their address (PIX_LOCATION_ALLOWED_HOSTS). */
  allowedHosts: readonly string[];
  /** Outside the sandbox, any other institution's documents are read too, through the address guard. */
  readPublicHosts: boolean;
}

/** Tries per call: the first and two more, 200 ms then 400 ms apart. */
const ATTEMPTS = 3;
const FIRST_BACKOFF_MS = 200;

interface DictEntry {
  account: { participant: string; participantName: string; branch: string; accountNumber: string; accountType: string };
  owner: { taxIdNumber: string; name: string };
}

type PayoutAnswer = ProviderPayoutState & { payoutId: string };

const unavailable = (why: string) => new DomainError('PIX_PROVIDER_UNAVAILABLE', { why });

export function httpPixProvider(em: () => EntityManager, o: HttpProviderOptions): PixProvider {
  const base = o.url.replace(/\/$/, '');
  const agent = keepAliveAgentFor(base);
  const fetchDocument = pixDocumentFetcher({ publicBaseUrl: o.publicBaseUrl, allowedHosts: o.allowedHosts, publicHosts: o.readPublicHosts });

  /** One call, tried again on a network error or a 5xx; a 4xx other than those `expected` is a refusal, thrown. */
  async function call<T>(method: 'GET' | 'POST', path: string, body: unknown, expected: number[] = []): Promise<{ status: number; body: T }> {
    let failure = '';
    const payload = body === undefined ? undefined : JSON.stringify(body);
    for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
      if (attempt > 1) await new Promise((resolve) => setTimeout(resolve, FIRST_BACKOFF_MS * 2 ** (attempt - 2)));
      let res: { status: number; text: string };
      try {
        res = await exchange(method, `${base}${path}`, payload);
      } catch (err) {
        failure = `${method} ${path}: ${err instanceof Error ? err.message : String(err)}`;
        continue;
      }
      if (res.status >= 500) {
        failure = `${method} ${path} answered ${res.status}`;
        continue;
      }
      if ((res.status >= 200 && res.status < 300) || expected.includes(res.status)) return { status: res.status, body: (res.text ? JSON.parse(res.text) : null) as T };
      throw new Error(`The Pix provider refused ${method} ${path}: ${res.status} ${res.text.slice(0, 300)}`);
    }
    throw unavailable(failure);
  }

  /** One request over connections kept open between calls (`httpExchange`). */
  function exchange(method: 'GET' | 'POST', url: string, payload: string | undefined): Promise<{ status: number; text: string }> {
    const headers: http.OutgoingHttpHeaders = { authorization: `Bearer ${o.apiKey}`, accept: 'application/json' };
    if (payload !== undefined) Object.assign(headers, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) });
    return httpExchange({ method, url, headers, body: payload, agent, timeoutMs: o.timeoutMs });
  }

  async function resolveKey(type: PixKeyType, key: string): Promise<Beneficiary | null> {
    const res = await call<DictEntry>('GET', `/dict/keys/${type}/${encodeURIComponent(key)}`, undefined, [404]);
    if (res.status === 404) return null;
    const { account, owner } = res.body;
    return { ispb: account.participant, institution: account.participantName, name: owner.name, document: owner.taxIdNumber, branch: account.branch, account: account.accountNumber, accountType: account.accountType };
  }

  return {
    resolveKey,

    /**
     * A charge of the platform itself is the platform's data: its receiver is read here, not asked of the PSP. Any
     * other charge's receiver is the owner of its key, as the directory answers.
     */
    async resolveChargeReceiver(charge) {
      if (txidOfOwnLocation(o.publicBaseUrl, charge.location) !== charge.txid) return resolveKey(charge.pixKeyType, charge.pixKey);
      const reader = em();
      const found = await findChargeByTxid(reader, charge.txid);
      if (!found) return null;
      const account = await reader.findOneOrFail(Account, { id: found.accountId });
      const holder = await reader.findOneOrFail(Holder, { id: account.holderId! });
      const tenant = await reader.findOneOrFail(Tenant, { id: account.tenantId });
      return { ispb: PLATFORM_ISPB, institution: tenant.name, name: holder.name, document: holder.document, branch: account.agency, account: account.number, accountType: 'CACC' };
    },

    fetchDocument,

    async submitPayout(p: PayoutSubmission): Promise<void> {
      await call('POST', '/payouts', {
        payoutId: p.payoutId,
        amountCents: p.amountCents.toString(),
        receiver: p.receiver,
        charge: p.charge ? { txid: p.charge.txid } : null,
        payer: p.payer,
      });
    },

    async queryPayout(payoutId: string): Promise<ProviderPayoutState> {
      const { body } = await call<PayoutAnswer>('GET', `/payouts/${encodeURIComponent(payoutId)}`, undefined);
      const { payoutId: _id, ...state } = body;
      return state;
    },

    async returnPix(r: PixReturn): Promise<void> {
      await call('POST', '/returns', { endToEndId: r.endToEndId, originalEndToEndId: r.originalEndToEndId, amountCents: r.amountCents.toString() });
    },
  };
}
