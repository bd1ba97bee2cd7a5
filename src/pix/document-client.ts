import { Agent, request, type Dispatcher } from 'undici';
import { guardedLookup, isForbiddenLiteral } from '../shared/address-guard.ts';
import type { PixDocument } from './provider.ts';
import { isPublishedHere, servedAt } from './public-urls.ts';

/** A payer's app waits seconds, not minutes, for a charge; a location slower than this is unavailable. */
const TIMEOUT_MS = 5000;
/** A charge's payload is a few KiB: anything much larger is not one, and is not read. */
const MAX_BYTES = 64 * 1024;

/** Which hosts the platform reads Pix documents (charge payloads, key sets) from, besides its own. */
export interface PixDocumentPolicy {
  /** The platform's public base: its own documents are read where the holder API serves them. */
  publicBaseUrl: string;
  /** `host[:port]` entries read as they are, whatever their address (PIX_LOCATION_ALLOWED_HOSTS). */
  allowedHosts: readonly string[];
  /**
   * Whether any other host is read too: on the https port, at public addresses only (the webhooks' address guard,
   * checked at connect time). False in the sandbox, which stands for the whole network: it reads only the above.
   */
  publicHosts: boolean;
}

const refused = (error: string): Promise<PixDocument> => Promise.resolve({ ok: false, error });

/**
 * GETs documents of the Pix network: no redirects, at most 64 KiB, the whole exchange (connect, TLS, headers, body)
 * within 5 s. A code's location can never make the platform reach inward or probe ports: only its own documents, the
 * allowed hosts and (outside the sandbox) public hosts on port 443 are read, and a failure is told in the platform's
 * words, never a library's.
 */
export function pixDocumentFetcher(policy: PixDocumentPolicy): (url: URL) => Promise<PixDocument> {
  const direct = new Agent({ connect: { timeout: TIMEOUT_MS }, headersTimeout: TIMEOUT_MS, bodyTimeout: TIMEOUT_MS });
  const guarded = new Agent({ connect: { timeout: TIMEOUT_MS, lookup: guardedLookup }, headersTimeout: TIMEOUT_MS, bodyTimeout: TIMEOUT_MS });
  const allowed = new Set(policy.allowedHosts);
  return (url) => {
    if (isPublishedHere(policy.publicBaseUrl, url)) return fetchWithin(servedAt(policy.publicBaseUrl, url), url.host, direct);
    if (allowed.has(url.host)) return fetchWithin(url, url.host, direct);
    if (!policy.publicHosts) return refused(`${url.host} is not read by this sandbox: only this platform's own charges and the hosts its operator allows are`);
    if (url.port !== '') return refused(`${url.host} is not read: charges are read on the https port (443) only`);
    if (isForbiddenLiteral(url)) return refused(`${url.host} is a private or reserved address`);
    return fetchWithin(url, url.host, guarded);
  };
}

/** The whole exchange within TIMEOUT_MS: the deadline answers even if a stalled handshake ignores the abort. */
async function fetchWithin(url: URL, host: string, dispatcher: Dispatcher): Promise<PixDocument> {
  const abort = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<PixDocument>((resolve) => {
    timer = setTimeout(() => {
      abort.abort();
      resolve({ ok: false, error: noAnswer(host) });
    }, TIMEOUT_MS);
  });
  try {
    return await Promise.race([read(url, host, dispatcher, abort.signal), deadline]);
  } finally {
    clearTimeout(timer);
  }
}

async function read(url: URL, host: string, dispatcher: Dispatcher, signal: AbortSignal): Promise<PixDocument> {
  try {
    const res = await request(url, {
      method: 'GET',
      dispatcher,
      headers: { accept: 'application/jose, application/json', 'user-agent': 'banking-platform-pix/1' },
      signal,
    });
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of res.body) {
      size += (chunk as Buffer).length;
      if (size > MAX_BYTES) {
        res.body.destroy();
        return { ok: false, error: `${host} answered more than ${MAX_BYTES} bytes` };
      }
      chunks.push(chunk as Buffer);
    }
    return { ok: true, status: res.statusCode, body: Buffer.concat(chunks).toString('utf8') };
  } catch (err) {
    return { ok: false, error: failureOf(host, err) };
  }
}

/** The deadline's words, whichever timer ends the exchange: ours, or one of the client's, set to the same 5 s. */
const noAnswer = (host: string) => `${host} gave no answer within ${TIMEOUT_MS / 1000} s`;

const TIMEOUTS = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'ETIMEDOUT', 'ABORT_ERR']);
const NO_SUCH_HOST = new Set(['ENOTFOUND', 'EAI_AGAIN', 'EAI_NONAME', 'EAI_NODATA']);

/** What failed, in the platform's words: a library's message (OpenSSL's above all) tells the caller about our internals. */
function failureOf(host: string, err: unknown): string {
  const cause = err instanceof Error && err.cause instanceof Error ? err.cause : err;
  const code = (cause as NodeJS.ErrnoException | undefined)?.code ?? '';
  const name = cause instanceof Error ? cause.name : '';
  if (TIMEOUTS.has(code) || name === 'AbortError' || name === 'TimeoutError') return noAnswer(host);
  return `${host} could not be reached: ${unreachableBecause(code)}`;
}

function unreachableBecause(code: string): string {
  if (code === 'EFORBIDDENADDRESS') return 'it resolves to a private or reserved address';
  if (NO_SUCH_HOST.has(code)) return 'no such host';
  if (/^(ERR_SSL_|ERR_TLS_)|CERT|SIGNATURE|ISSUER/.test(code)) return 'the secure connection (TLS) failed: a certificate not trusted, or not TLS';
  return 'the connection failed';
}
