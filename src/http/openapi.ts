import { OpenAPIRegistry, OpenApiGeneratorV31 } from '@asteasolutions/zod-to-openapi';
import { z } from '../shared/zod.ts';
import { ERROR_CODES, type ErrorCode } from './error-codes.ts';

export const ErrorDetail = z
  .object({
    path: z.string().openapi({ description: 'Where the refused input is: `body.amount`, `query.limit`, `headers.x-tenant-id`, `params.accountId`', example: 'body.amount' }),
    message: z.string().openapi({ example: 'must be greater than 0 and at most 1000000000 reais' }),
    // LIMIT_EXCEEDED names the limit the amount breaks.
    channel: z.enum(['PIX', 'TEV']).optional().openapi({ description: 'LIMIT_EXCEEDED: the channel of the limit' }),
    period: z
      .enum(['TRANSACTION', 'DAY', 'NIGHT', 'MONTH'])
      .optional()
      .openapi({ description: 'LIMIT_EXCEEDED: which limit: per transaction, the day period, the night period or the calendar month (America/Sao_Paulo)' }),
    limitCents: z.string().regex(/^[0-9]+$/).optional().openapi({ description: 'LIMIT_EXCEEDED: the limit in force, in cents' }),
    remainingCents: z.string().regex(/^[0-9]+$/).optional().openapi({ description: 'LIMIT_EXCEEDED: what remains of it in the current period, in cents' }),
  })
  .openapi('ErrorDetail');

/** decisions.md's error body; each operation narrows `code` to the codes it can answer with that status. */
export const ErrorBody = z
  .object({
    code: z.string().regex(/^[A-Z][A-Z_]*$/).openapi({ description: 'Stable, UPPER_SNAKE_CASE: switch on it', example: 'VALIDATION_ERROR' }),
    message: z.string().openapi({ description: 'For a person; may change', example: ERROR_CODES.VALIDATION_ERROR }),
    details: z.array(ErrorDetail).optional().openapi({ description: 'Each refused input, for VALIDATION_ERROR; the limit broken, for LIMIT_EXCEEDED' }),
  })
  .openapi('Error');

/** The error body of one operation and status: `code` is exactly one of `codes`, each described. */
export function errorSchema(codes: readonly ErrorCode[]) {
  const described = codes.map((c) => `- \`${c}\`: ${ERROR_CODES[c]}`).join('\n');
  return ErrorBody.extend({ code: z.enum(codes as [ErrorCode, ...ErrorCode[]]).openapi({ description: described }) });
}

const EXAMPLE_DETAILS: Partial<Record<ErrorCode, z.infer<typeof ErrorDetail>[]>> = {
  VALIDATION_ERROR: [{ path: 'body.amount', message: 'must be greater than 0 and at most 1000000000 reais' }],
  LIMIT_EXCEEDED: [
    { path: 'body.amount', message: 'above what remains of the PIX night limit', channel: 'PIX', period: 'NIGHT', limitCents: '100000', remainingCents: '25000' },
  ],
};

export function errorExample(code: ErrorCode) {
  const details = EXAMPLE_DETAILS[code];
  return { code, message: ERROR_CODES[code], ...(details ? { details } : {}) };
}

/** Request ids: a caller's own (letters, digits, `. _ : -`, up to 128) is kept, anything else replaced by a UUID. */
export const REQUEST_ID_PATTERN = /^[A-Za-z0-9._:-]{1,128}$/;
export const REQUEST_ID_PARAMETER = { $ref: '#/components/parameters/RequestId' };
export const REQUEST_ID_HEADER = { 'X-Request-Id': { $ref: '#/components/headers/RequestId' } };

/**
 * Credentials sent in headers, described as security schemes so that /docs asks for them once (Authorize) and keeps
 * them, instead of as a parameter of every operation. They are still validated with the route's headers.
 */
export const HEADER_SCHEMES = { tenantId: 'x-tenant-id', tenantApiKey: 'x-tenant-api-key' } as const;

const TAGS: Record<string, string> = {
  Registration: 'Public registration of people (CPF) and companies (CNPJ); KYC onboarding starts at once.',
  Authentication: 'Holder tokens: document and password, or a tenant API key exchanged server to server.',
  PIN: 'The 4-digit PIN that authorizes payments.',
  Accounts: "The holder's accounts.",
  Limits: 'Transaction limits per channel (Pix, TEV): per transaction, day and night periods, calendar month; lowering is immediate, raising waits.',
  TEV: 'Internal transfers between accounts of one tenant, settled synchronously.',
  Approvals: 'Dual approval: payments of an account held for a second holder to approve or reject.',
  Pix: 'Pix payments by key or static BR Code.',
  Contacts: "Trusted contacts (favorecidos): Pix keys and accounts of the tenant that an account's payments may reach above the night limit, 24 h after they are added.",
  'Pix charges': 'Charges (cobranças): a txid and a dynamic BR Code the payer pays once.',
  'Pix provider': "Called by the platform's Pix provider (PSP), not by integrators: its signed notifications of payouts and incoming Pix.",
  Statements: 'Account transactions of a date range, with cursor pagination; the same range as a CSV, OFX or PDF file; the balance at any moment.',
  Receipts: 'Receipts (comprovantes) of final, successful movements, as JSON or PDF, and the public verification of their authentication codes.',
  Payouts: 'The status and ledger entries of a sent payment, of any channel.',
  Fees: "The fee schedule in force for a Pix account.",
  Webhooks: 'HTTPS endpoints that receive the events of a Pix account, and their delivery log.',
  Sandbox: 'SANDBOX=1 only: KYC completion, incoming Pix and charge payments, to fund and drive test accounts.',
  Events: 'What a registered webhook endpoint receives: a POST of `{ event, data }` per event, signed (Standard Webhooks).',
  Health: 'Whether the API reaches its database and Temporal.',
  Monitoring: 'Figures for monitoring systems: the settlement backlog, in the Prometheus text format.',
};

/** The API description and the generated client may be copied and adapted by integrators. */
const LICENSE = { name: 'MIT', identifier: 'MIT' };

export function createRegistry(security: 'holder' | 'apiKey'): OpenAPIRegistry {
  const registry = new OpenAPIRegistry();
  registry.register('Error', ErrorBody);
  registry.registerComponent('headers', 'RequestId', {
    description: 'The id of this request in the platform logs: the caller\'s X-Request-Id when it is sane, else a new UUID. Quote it to support.',
    required: true,
    schema: { type: 'string', pattern: REQUEST_ID_PATTERN.source, example: '6f1c2d3e-4b5a-4978-8c9d-0e1f2a3b4c5d' },
  });
  registry.registerComponent('parameters', 'RequestId', {
    name: 'X-Request-Id',
    in: 'header',
    required: false,
    description: 'Your id for this request, echoed in the response and written to the platform logs; letters, digits and `. _ : -`, up to 128 (e.g. `checkout-7f3a`).',
    // No example: /docs fills a parameter with its example, and every call from the page would carry the same id.
    schema: { type: 'string', pattern: REQUEST_ID_PATTERN.source },
  });
  if (security === 'holder') {
    registry.registerComponent('securitySchemes', 'tenantId', {
      type: 'apiKey',
      in: 'header',
      name: 'X-Tenant-Id',
      description:
        'Required on every holder endpoint: the tenant UUID, sent as the X-Tenant-Id header. A missing or malformed value is 400 VALIDATION_ERROR; ' +
        'one naming no tenant is 400 UNKNOWN_TENANT (401 on /authenticate/clients).',
    });
    registry.registerComponent('securitySchemes', 'holderJwt', {
      type: 'http',
      scheme: 'bearer',
      bearerFormat: 'JWT',
      description: 'The holder token from registration or authentication (1 hour; 24 hours from /authenticate/clients). A missing, invalid or expired one is 401.',
    });
    registry.registerComponent('securitySchemes', 'tenantApiKey', {
      type: 'apiKey',
      in: 'header',
      name: 'X-Tenant-Api-Key',
      description: 'The tenant API key, `tnk_<prefix>.<secret>`, for server-to-server use only (operator command `tenant-key:create`).',
    });
  } else {
    registry.registerComponent('securitySchemes', 'apiKey', {
      type: 'http',
      scheme: 'bearer',
      description: 'The integration API key, `pak_<prefix>.<secret>`, scoped to Pix accounts (operator command `api-key:create`). A missing, invalid or revoked one is 401.',
    });
  }
  return registry;
}

export interface DocumentInfo {
  title: string;
  description: string;
  serverUrl: string;
}

const GENERAL =
  '\n\nEvery response carries `X-Request-Id`. Every failure that is not a business outcome has the `Error` body, whose `code` each operation lists by status. ' +
  'A path or method that is not listed here answers 404 `NOT_FOUND` with that body; before reaching any operation, a request may also be ' +
  'answered 400 `VALIDATION_ERROR` (a body that is not JSON), 408 `REQUEST_TIMEOUT`, 413 `PAYLOAD_TOO_LARGE`, 415 `UNSUPPORTED_MEDIA_TYPE`, ' +
  '431 `HEADERS_TOO_LARGE`, 500 `INTERNAL_ERROR` or 503 `UNAVAILABLE`.';

export function generateDocument(registry: OpenAPIRegistry, info: DocumentInfo) {
  const document = new OpenApiGeneratorV31(registry.definitions).generateDocument({
    openapi: '3.1.0',
    info: { title: info.title, version: '1.0.0', description: info.description + GENERAL, license: LICENSE },
    servers: [{ url: info.serverUrl }],
  });
  const operations = [...Object.values(document.paths ?? {}), ...Object.values(document.webhooks ?? {})].flatMap((item) => Object.values(item) as { tags?: string[] }[]);
  const used = new Set(operations.flatMap((op) => op.tags ?? []));
  return { ...document, tags: Object.entries(TAGS).filter(([name]) => used.has(name)).map(([name, description]) => ({ name, description })) };
}
