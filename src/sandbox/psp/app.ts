import { createHash, timingSafeEqual } from 'node:crypto';
import express, { type NextFunction, type Request, type Response } from 'express';
import type { Logger } from 'pino';
import { PIX_KEY_TYPES, validatePixKey } from '../../pix/keys.ts';
import { documentSchema } from '../../shared/documents.ts';
import { centsAmountSchema } from '../../shared/money.ts';
import { freeText, z } from '../../shared/zod.ts';
import { dictEntry } from './network.ts';
import { PspError, readPayout, returnSettledPayout, sendReturn, submitPayout, type PspContext } from './psp.ts';
import { listNotifications, setControls } from './store.ts';

/**
 * The sandbox PSP's HTTP API, in the spirit of a PSP's Pix API (bacen/pix-api, Celcoin, Stark Bank): the directory
 * (`GET /dict/keys/:type/:key`), payouts (`POST /payouts`, `GET /payouts/:payoutId`), returns (`POST /returns`), and
 * the sandbox controls under `/sandbox/`. JSON; cents as strings; every call but `/health` presents
 * `Authorization: Bearer <PIX_PROVIDER_API_KEY>`. Errors are `{ code, message, details? }`.
 */

const ispb = z.string().regex(/^\d{8}$/, 'an ISPB is 8 digits');
const branch = z.string().regex(/^\d{1,4}$/, 'a branch is 1 to 4 digits');
const account = z.string().regex(/^\d{1,20}$/, 'an account number is 1 to 20 digits');
const cuidLike = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'letters, digits, _ and -, up to 64');
const endToEndId = (letter: 'E' | 'D') => z.string().regex(new RegExp(`^${letter}\\d{20}[A-Za-z0-9]{11}$`), `an ${letter}… id of 32 characters`);

const PayoutSubmission = z.object({
  payoutId: cuidLike,
  amountCents: centsAmountSchema,
  receiver: z.object({ ispb, branch, account }),
  /** A payment of a dynamic QR Code names the charge it pays. */
  charge: z.object({ txid: z.string().regex(/^[A-Za-z0-9]{26,35}$/, 'a txid is 26 to 35 letters and digits') }).nullable().default(null),
  payer: z.object({
    name: freeText().trim().min(1).max(140),
    document: documentSchema,
    ispb,
    institution: freeText().trim().min(1).max(140),
    branch,
    account,
  }),
});

const ReturnRequest = z.object({ endToEndId: endToEndId('D'), originalEndToEndId: endToEndId('E'), amountCents: centsAmountSchema });
const ReturnControl = z.object({ endToEndId: endToEndId('E'), amountCents: centsAmountSchema });
const DropControl = z.object({ count: z.number().int().min(0).max(10_000) });
const DelayControl = z.object({ count: z.number().int().min(0).max(10_000), delayMs: z.number().int().min(0).max(3_600_000) });
const NotificationQuery = z.object({ payoutId: cuidLike.optional(), limit: z.coerce.number().int().min(1).max(500).default(100) });

const digest = (s: string) => createHash('sha256').update(s).digest();

/** Bearer credential, compared in constant time (over digests, so its length is not told either). */
function bearer(apiKey: string) {
  const expected = digest(apiKey);
  return (req: Request, res: Response, next: NextFunction) => {
    const given = /^Bearer (\S+)$/.exec(req.headers.authorization ?? '')?.[1];
    if (given !== undefined && timingSafeEqual(digest(given), expected)) return next();
    res.setHeader('www-authenticate', 'Bearer');
    res.status(401).json({ code: 'UNAUTHORIZED', message: 'Missing or invalid bearer credential' });
  };
}

function parse<S extends z.ZodType>(schema: S, value: unknown): z.output<S> {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const details = parsed.error.issues.map((i) => ({ path: i.path.join('.'), message: i.message }));
  throw new PspError(400, 'VALIDATION_ERROR', 'The request is not valid', details);
}

type Handler = (req: Request) => Promise<{ status: number; body: unknown }>;
const route = (h: Handler) => (req: Request, res: Response, next: NextFunction) =>
  h(req).then(({ status, body }) => res.status(status).json(body), next);

export function createPspApp(ctx: PspContext, options: { apiKey: string; logger: Logger }) {
  const app = express();
  app.disable('x-powered-by');
  // No client revalidates an API answer: a hash of every body was work for nothing, as in the platform's apps.
  app.set('etag', false);
  app.use(express.json({ limit: '64kb' }));

  app.get('/health', async (_req, res) => {
    try {
      await ctx.pool.query('select 1');
      res.json({ status: 'ok' });
    } catch {
      res.status(503).json({ code: 'UNAVAILABLE', message: 'The sandbox PSP cannot reach its database' });
    }
  });

  app.use(bearer(options.apiKey));

  app.get(
    '/dict/keys/:type/:key',
    route(async (req) => {
      const type = parse(z.enum(PIX_KEY_TYPES), req.params.type);
      const check = validatePixKey(type, String(req.params.key));
      if (!check.ok) throw new PspError(400, 'VALIDATION_ERROR', `Not a valid ${type} key: ${check.reason}`);
      const entry = dictEntry(type, check.key);
      if (!entry) throw new PspError(404, 'KEY_NOT_FOUND', `No account answers for the ${type} key ${check.key}`);
      return { status: 200, body: entry };
    }),
  );

  app.post(
    '/payouts',
    route(async (req) => {
      const s = parse(PayoutSubmission, req.body);
      const { created, payout } = await submitPayout(ctx, { ...s, txid: s.charge?.txid ?? null });
      return { status: created ? 201 : 200, body: payout };
    }),
  );

  app.get(
    '/payouts/:payoutId',
    route(async (req) => ({ status: 200, body: await readPayout(ctx, parse(cuidLike, req.params.payoutId)) })),
  );

  app.post(
    '/returns',
    route(async (req) => {
      const { created, sent } = await sendReturn(ctx, parse(ReturnRequest, req.body));
      return { status: created ? 201 : 200, body: sent };
    }),
  );

  app.post(
    '/sandbox/returns',
    route(async (req) => ({ status: 201, body: await returnSettledPayout(ctx, parse(ReturnControl, req.body)) })),
  );

  app.post(
    '/sandbox/notifications/drop',
    route(async (req) => ({ status: 200, body: await setControls(ctx.pool, ctx.platformUrl, { dropNext: parse(DropControl, req.body).count }) })),
  );

  app.post(
    '/sandbox/notifications/delay',
    route(async (req) => {
      const c = parse(DelayControl, req.body);
      return { status: 200, body: await setControls(ctx.pool, ctx.platformUrl, { delayNext: c.count, delayMs: c.delayMs }) };
    }),
  );

  app.get(
    '/sandbox/notifications',
    route(async (req) => {
      const q = parse(NotificationQuery, req.query);
      return { status: 200, body: { notifications: await listNotifications(ctx.pool, ctx.platformUrl, q.payoutId ?? null, q.limit) } };
    }),
  );

  app.use((_req: Request, res: Response) => res.status(404).json({ code: 'NOT_FOUND', message: 'No such route' }));

  app.use((err: unknown, _req: Request, res: Response, _next: NextFunction) => {
    if (err instanceof PspError) return res.status(err.status).json({ code: err.code, message: err.message, ...(err.details ? { details: err.details } : {}) });
    const status = (err as { status?: unknown }).status;
    if (typeof status === 'number' && status >= 400 && status < 500) {
      // Express's own refusals: a body that is not JSON, or too large.
      return res.status(status).json({ code: status === 413 ? 'PAYLOAD_TOO_LARGE' : 'VALIDATION_ERROR', message: (err as Error).message });
    }
    options.logger.error({ err }, 'sandbox PSP request failed');
    return res.status(500).json({ code: 'INTERNAL_ERROR', message: 'The sandbox PSP failed to answer' });
  });

  return app;
}
