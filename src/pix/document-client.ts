import { isIP } from 'node:net';
import { Agent, request } from 'undici';
import { guardedLookup, isForbiddenAddress } from '../shared/address-guard.ts';
import type { PixDocument } from './provider.ts';

/** A payer's app waits seconds, not minutes, for a charge; a location slower than this is unavailable. */
const TIMEOUT_MS = 5000;
/** A charge's payload is a few KiB: anything much larger is not one, and is not read. */
const MAX_BYTES = 64 * 1024;

/**
 * GETs public documents of the Pix network (charge payloads, key sets): no redirects, at most 64 KiB, 5 s. With
 * `guard`, the socket connects to public addresses only (the webhooks' address guard, checked at connect time), so a
 * code's location can never make the platform reach inward.
 */
export function pixDocumentClient(options: { guard: boolean }): (url: URL) => Promise<PixDocument> {
  const dispatcher = new Agent({ connect: options.guard ? { lookup: guardedLookup } : {}, headersTimeout: TIMEOUT_MS, bodyTimeout: TIMEOUT_MS });
  return async (url) => {
    // A literal address is never looked up, so the connect-time guard cannot see it: it is checked here.
    const literal = url.hostname.replace(/^\[|\]$/g, '');
    if (options.guard && isIP(literal) && isForbiddenAddress(literal)) return { ok: false, error: `${url.host} could not be reached: it is a private address` };
    try {
      const res = await request(url, {
        method: 'GET',
        dispatcher,
        headers: { accept: 'application/jose, application/json', 'user-agent': 'banking-platform-pix/1' },
        signal: AbortSignal.timeout(TIMEOUT_MS),
      });
      const chunks: Buffer[] = [];
      let read = 0;
      for await (const chunk of res.body) {
        read += (chunk as Buffer).length;
        if (read > MAX_BYTES) {
          res.body.destroy();
          return { ok: false, error: `${url.host} answered more than ${MAX_BYTES} bytes` };
        }
        chunks.push(chunk as Buffer);
      }
      return { ok: true, status: res.statusCode, body: Buffer.concat(chunks).toString('utf8') };
    } catch (err) {
      const cause = err instanceof Error && err.cause instanceof Error ? err.cause : err;
      const reason = cause instanceof Error ? ((cause as NodeJS.ErrnoException).code === 'EFORBIDDENADDRESS' ? 'it resolves to a private address' : cause.message) : String(cause);
      return { ok: false, error: `${url.host} could not be reached: ${reason}` };
    }
  };
}
