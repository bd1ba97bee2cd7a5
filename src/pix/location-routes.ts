import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import type { Router } from 'express';
import { documentOperation } from '../http/operation-doc.ts';
import { HTTP_LAYER_ERRORS } from '../http/route.ts';
import type { Services } from '../services.ts';
import { z } from '../shared/zod.ts';
import { findChargeByTxid } from './charge-store.ts';
import { cobPayloadOf, receiverKeyOf } from './cob-payload.ts';
import { keySetUrl } from './public-urls.ts';
import { platformSigner } from './signing-key.ts';

const TXID = /^[A-Za-z0-9]{26,35}$/;

/** API Pix error `CobPayloadNaoEncontrado` (RFC 7807), with the platform's own `code` and `message` beside it. */
const COB_PAYLOAD_NOT_FOUND = {
  type: 'https://pix.bcb.gov.br/api/v2/error/CobPayloadNaoEncontrado',
  title: 'Cobrança não encontrada',
  status: 404,
  detail: 'Nenhuma cobrança nesta location',
  code: 'NOT_FOUND',
  message: 'Charge not found',
} as const;

/**
 * What payers' institutions read when a holder scans a charge's dynamic BR Code: the location `/pix/cob/<txid>` serves
 * the charge's payload as a JWS (`application/jose`), signed with the platform's key, whose public half is at
 * `/pix/jwks.json` (the `jku` of every payload). Both are public, as the Pix rules require: a location is a capability
 * URL (its 32-character txid is not guessable).
 */
export function registerPixLocationRoutes(router: Router, registry: OpenAPIRegistry, { config, orm }: Services): void {
  const signer = platformSigner(config);
  const jku = keySetUrl(config.publicBaseUrl);
  documentLocationRoutes(registry);

  router.get('/pix/jwks.json', (_req, res) => {
    res.set('cache-control', 'public, max-age=300').json({ keys: [signer.publicJwk] });
  });

  router.get('/pix/cob/:txid', async (req, res, next) => {
    try {
      const txid = req.params.txid;
      const charge = TXID.test(txid) ? await findChargeByTxid(orm.em.fork(), txid) : null;
      if (!charge) {
        res
          .status(404)
          .type('application/problem+json')
          .json(COB_PAYLOAD_NOT_FOUND);
        return;
      }
      // Paid and expired charges are still served, as the API Pix allows: their status and calendar tell the payer why
      // the charge cannot be paid, which a bare 404 would not.
      const payload = cobPayloadOf(charge, receiverKeyOf(config.KEY_PEPPER, charge.accountId), new Date());
      res.set('cache-control', 'no-store').type('application/jose').send(signer.sign(payload, jku));
    } catch (err) {
      next(err);
    }
  });
}

const JwkSet = z
  .object({
    keys: z.array(
      z
        .object({
          kty: z.enum(['EC', 'RSA']),
          kid: z.string().openapi({ description: 'RFC 7638 thumbprint of the key; the `kid` of every payload it signs' }),
          alg: z.enum(['ES256', 'PS256']),
          use: z.literal('sig'),
          crv: z.string().optional(),
          x: z.string().optional(),
          y: z.string().optional(),
          n: z.string().optional(),
          e: z.string().optional(),
        })
        .openapi('PixSigningKey'),
    ),
  })
  .openapi('PixKeySet');

const CobPayloadNotFound = z
  .object({
    type: z.literal('https://pix.bcb.gov.br/api/v2/error/CobPayloadNaoEncontrado'),
    title: z.string(),
    status: z.literal(404),
    detail: z.string(),
    code: z.literal('NOT_FOUND'),
    message: z.string(),
  })
  .openapi('PixCobPayloadNotFound');

const EXAMPLE_JWS = 'eyJhbGciOiJFUzI1NiIsImtpZCI6Ii4uLiIsImprdSI6Imh0dHBzOi8vYmFuay5leGFtcGxlL3BpeC9qd2tzLmpzb24ifQ.eyJ0eGlkIjoiLi4uIn0.c2lnbmF0dXJl';

/** Both locations are public and answer outside JSON's conventions where the Pix rules say so. */
function documentLocationRoutes(registry: OpenAPIRegistry): void {
  documentOperation(registry, {
    method: 'get',
    path: '/pix/cob/:txid',
    operationId: 'readChargeLocation',
    tags: ['Pix charges'],
    summary: "A charge's dynamic BR Code location: its payload (API Pix `cob`) as a JWS signed with the platform's key",
    description:
      "What a payer's institution fetches when a holder scans a charge. The JWS header carries `alg`, `kid` and `jku` " +
      '(this host\'s /pix/jwks.json). Paid, refunded and expired charges are served too: their `status` and `calendario` say why they cannot be paid.',
    params: z.object({ txid: z.string().openapi({ description: 'The charge txid (26 to 35 letters and digits)', example: 'k8Jd0s2LqX9vT4mB7nC1pR5wY3' }) }),
    security: [[]],
    responses: {
      200: { description: 'The signed payload (JWS compact serialization)', contentType: 'application/jose', schema: z.string(), example: EXAMPLE_JWS },
      404: {
        description: 'No charge at this location (API Pix `CobPayloadNaoEncontrado`, RFC 7807)',
        contentType: 'application/problem+json',
        schema: CobPayloadNotFound,
        example: COB_PAYLOAD_NOT_FOUND,
      },
    },
    errors: HTTP_LAYER_ERRORS,
  });
  documentOperation(registry, {
    method: 'get',
    path: '/pix/jwks.json',
    operationId: 'readPixKeySet',
    tags: ['Pix charges'],
    summary: 'The public keys that sign charge payloads (JWKS): the `jku` of every payload',
    security: [[]],
    responses: {
      200: {
        description: 'The key set',
        schema: JwkSet,
        example: { keys: [{ kty: 'EC', crv: 'P-256', x: 'f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU', y: 'x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0', kid: 'NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs', alg: 'ES256', use: 'sig' }] },
      },
    },
    errors: HTTP_LAYER_ERRORS,
  });
}
