import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import type { Router } from 'express';
import type { Config } from '../config.ts';
import { accountIdParams, accountNumber, branch, paginated, tenantHeaders, utcDateTime, uuid } from '../http/common-schemas.ts';
import type { Authenticator } from '../http/route.ts';
import { defineRoute } from '../http/route.ts';
import type { HolderAuth } from '../identity/authenticator.ts';
import { pinSchema } from '../identity/pin.ts';
import { pixKeyTypeSchema, validatePixKey } from '../pix/keys.ts';
import { pageQuery } from '../shared/pagination.ts';
import { z } from '../shared/zod.ts';
import { addContact, listContacts, removeContact, type ContactRequest } from './service.ts';
import type { Contact } from './store.ts';

const pin = pinSchema.optional().openapi({ description: '4 digits; not needed for client tokens of PIN-exempt tenants' });

/** A Pix key (validated against its type and kept in canonical form), or a branch and account of the tenant. */
const NewContact = z
  .discriminatedUnion('kind', [
    z
      .object({
        kind: z.literal('PIX_KEY'),
        pixKey: z.string().max(100).openapi({ description: 'Pix key, in the format of its type', example: 'maria@example.com' }),
        pixKeyType: pixKeyTypeSchema,
        pin,
      })
      .openapi('NewPixKeyContact'),
    z
      .object({
        kind: z.literal('ACCOUNT'),
        branch: z.string().regex(/^\d{1,4}$/, 'digits only, with or without leading zeros').openapi({ example: '0001' }),
        account: z.string().regex(/^\d{1,20}$/, 'digits only, with or without leading zeros').openapi({ example: '1000024' }),
        pin,
      })
      .openapi('NewAccountContact'),
  ])
  .transform((body, ctx) => {
    if (body.kind === 'ACCOUNT') return { request: { kind: body.kind, branch: body.branch, account: body.account } satisfies ContactRequest, pin: body.pin };
    const check = validatePixKey(body.pixKeyType, body.pixKey);
    if (check.ok) return { request: { kind: body.kind, pixKey: check.key, pixKeyType: body.pixKeyType } satisfies ContactRequest, pin: body.pin };
    ctx.addIssue({ code: 'custom', path: ['pixKey'], message: `invalid ${body.pixKeyType} Pix key: ${check.reason}` });
    return z.NEVER;
  })
  .openapi('NewTrustedContact');

const TrustedContact = z
  .object({
    id: uuid('3f6c1e2a-8b4d-4f7a-9c5e-2d1b0a9f8e7d'),
    kind: z.enum(['PIX_KEY', 'ACCOUNT']),
    pixKey: z.string().nullable().openapi({ description: 'PIX_KEY: the key in canonical form; null for an account', example: 'maria@example.com' }),
    pixKeyType: pixKeyTypeSchema.nullable(),
    branch: branch().nullable().openapi({ description: 'ACCOUNT: the branch, 4 digits; null for a Pix key' }),
    account: accountNumber().nullable().openapi({ description: 'ACCOUNT: the account number, without leading zeros; null for a Pix key' }),
    createdAt: utcDateTime('2026-11-24T13:45:07.123Z'),
    trustsAt: utcDateTime('2026-11-25T13:45:07.123Z').openapi({ description: 'When the contact becomes trusted: 24 h after it was added' }),
    trusted: z.boolean().openapi({ description: 'Payments to it are exempt from the night limit (not from the monthly one)' }),
    trustedFrom: utcDateTime('2026-11-25T13:45:07.456Z').nullable().openapi({ description: 'Since when it is trusted; null while it waits' }),
    removedAt: utcDateTime('2026-11-26T09:12:44.001Z').nullable().openapi({ description: 'Set in the answer of its removal; listed contacts have none' }),
  })
  .openapi('TrustedContact');

function view(c: Contact): z.infer<typeof TrustedContact> {
  return {
    id: c.id,
    kind: c.kind,
    pixKey: c.kind === 'PIX_KEY' ? c.pixKey : null,
    pixKeyType: c.kind === 'PIX_KEY' ? c.pixKeyType : null,
    branch: c.kind === 'ACCOUNT' ? c.branch : null,
    account: c.kind === 'ACCOUNT' ? c.account : null,
    createdAt: c.createdAt,
    trustsAt: c.trustsAt,
    trusted: c.trustedFrom !== null && c.removedAt === null,
    trustedFrom: c.trustedFrom,
    removedAt: c.removedAt,
  };
}

const waiting = {
  id: '3f6c1e2a-8b4d-4f7a-9c5e-2d1b0a9f8e7d',
  kind: 'PIX_KEY' as const,
  pixKey: 'maria@example.com',
  pixKeyType: 'EMAIL' as const,
  branch: null,
  account: null,
  createdAt: '2026-11-24T13:45:07.123Z',
  trustsAt: '2026-11-25T13:45:07.123Z',
  trusted: false,
  trustedFrom: null,
  removedAt: null,
};

const trustedAccount = {
  ...waiting,
  id: '9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d',
  kind: 'ACCOUNT' as const,
  pixKey: null,
  pixKeyType: null,
  branch: '0001',
  account: '1000024',
  createdAt: '2026-11-20T10:00:00.000Z',
  trustsAt: '2026-11-21T10:00:00.000Z',
  trusted: true,
  trustedFrom: '2026-11-21T10:00:00.318Z',
};

const contactParams = accountIdParams.extend({ contactId: z.uuid({ error: 'contactId must be a UUID' }) });

export function registerContactRoutes(router: Router, registry: OpenAPIRegistry, config: Config, auth: Authenticator<HolderAuth>): void {
  defineRoute(router, registry, {
    method: 'post',
    path: '/accounts/:accountId/contacts',
    operationId: 'addTrustedContact',
    tags: ['Contacts'],
    summary: 'Add a trusted contact (a Pix key, or a branch and account of the tenant); it is trusted 24 h later',
    description:
      'The PIN is required. The contact is trusted `trustsAt` (24 h after it is added); from then on, payments to it are exempt from the night ' +
      'limit, not from the monthly one. An account of the tenant is given by branch and number, with or without leading zeros ' +
      '(400 DESTINATION_NOT_FOUND when the tenant has none, SAME_ACCOUNT for the account itself). The same key or account twice is 409.',
    headers: tenantHeaders,
    auth,
    params: accountIdParams,
    body: NewContact,
    bodyExample: { kind: 'PIX_KEY', pixKey: 'maria@example.com', pixKeyType: 'EMAIL', pin: '2580' },
    responses: { 201: { description: 'Added; trusted from `trustsAt`', schema: TrustedContact, example: waiting } },
    raises: [addContact],
    async handler({ auth: a, params, body }) {
      return { status: 201, body: view(await addContact(config, a, params.accountId, body.request, body.pin)) };
    },
  });

  defineRoute(router, registry, {
    method: 'get',
    path: '/accounts/:accountId/contacts',
    operationId: 'listTrustedContacts',
    tags: ['Contacts'],
    summary: "The account's contacts, trusted or still waiting, newest first",
    headers: tenantHeaders,
    auth,
    params: accountIdParams,
    query: pageQuery,
    responses: {
      200: {
        description: 'A page of contacts',
        schema: paginated('contacts', TrustedContact).openapi('TrustedContactPage'),
        example: { contacts: [waiting, trustedAccount], pagination: { limit: 20, nextCursor: null, hasMore: false } },
      },
    },
    raises: [listContacts],
    async handler({ auth: a, params, query }) {
      const { contacts, pagination } = await listContacts(a.em, config.KEY_PEPPER, a.holder, params.accountId, query.limit, query.cursor);
      return { status: 200, body: { contacts: contacts.map(view), pagination } };
    },
  });

  defineRoute(router, registry, {
    method: 'delete',
    path: '/accounts/:accountId/contacts/:contactId',
    operationId: 'removeTrustedContact',
    tags: ['Contacts'],
    summary: 'Remove a contact: at once, no PIN (it only takes an exemption away); one still waiting never becomes trusted',
    headers: tenantHeaders,
    auth,
    params: contactParams,
    responses: {
      200: {
        description: 'Removed; adding it again starts a new 24 h wait',
        schema: TrustedContact,
        example: { ...trustedAccount, trusted: false, removedAt: '2026-11-26T09:12:44.001Z' },
      },
    },
    raises: [removeContact],
    async handler({ auth: a, params }) {
      return { status: 200, body: view(await removeContact(config, a, params.accountId, params.contactId)) };
    },
  });
}
