import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import type { Router } from 'express';
import { operatingAccount } from '../identity/operating-account.ts';
import { accountIdParams, accountNumber, branch, documentNumber, tenantHeaders, uuid } from '../http/common-schemas.ts';
import { defineRoute } from '../http/route.ts';
import type { HolderAuth } from '../identity/authenticator.ts';
import type { Authenticator } from '../http/route.ts';
import { digitsDocument } from '../identity/schemas.ts';
import { z } from '../shared/zod.ts';
import { findTevBeneficiary } from './beneficiary.ts';

const Beneficiary = z
  .object({
    beneficiary: z.object({
      name: z.string().openapi({ example: 'João Souza' }),
      document: documentNumber('11144477735').openapi({ description: 'Unmasked' }),
      accounts: z.array(
        z.object({
          id: uuid('1e2d3c4b-5a69-4788-9c0d-e1f2a3b4c5d6'),
          accountNumber: accountNumber('1000024').openapi({ description: 'What to pay, as accountNumber of the payment' }),
          agency: branch(),
          bank: z.string().regex(/^\d{3}$/).openapi({ example: '000' }),
          trustedContact: z.boolean().openapi({
            description: 'A trusted contact of the paying account now (added at least 24 h ago, not removed): exempt from its night limit, not from the monthly one',
          }),
        }),
      ),
    }),
  })
  .openapi('Beneficiary');

export function registerHolderTevRoutes(router: Router, registry: OpenAPIRegistry, auth: Authenticator<HolderAuth>): void {
  defineRoute(router, registry, {
    method: 'post',
    path: '/accounts/:accountId/tev/beneficiary',
    operationId: 'findTevBeneficiary',
    tags: ['TEV'],
    summary: 'Step 1 of TEV: find beneficiaries of the same tenant by document',
    headers: tenantHeaders,
    auth,
    params: accountIdParams,
    body: z.object({ document: digitsDocument }).openapi('BeneficiaryLookup'),
    bodyExample: { document: '11144477735' },
    responses: {
      200: {
        description: 'The beneficiary and its accounts able to receive',
        schema: Beneficiary,
        example: {
          beneficiary: {
            name: 'João Souza',
            document: '11144477735',
            accounts: [{ id: '1e2d3c4b-5a69-4788-9c0d-e1f2a3b4c5d6', accountNumber: '1000024', agency: '0001', bank: '000', trustedContact: false }],
          },
        },
      },
    },
    raises: [operatingAccount, findTevBeneficiary],
    async handler({ auth: a, params, body }) {
      const payer = await operatingAccount(a, params.accountId);
      const { holder, accounts } = await findTevBeneficiary(a.em, payer, body.document);
      return {
        status: 200,
        body: {
          beneficiary: {
            name: holder.name,
            document: holder.document,
            accounts: accounts.map(({ account: x, trustedContact }) => ({ id: x.id, accountNumber: x.number, agency: x.agency, bank: x.bank, trustedContact })),
          },
        },
      };
    },
  });
}
