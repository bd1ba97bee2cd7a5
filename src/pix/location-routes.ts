import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import type { Router } from 'express';
import { errorsRaisedBy } from '../http/error-codes.ts';
import { documentOperation, mergeErrors } from '../http/operation-doc.ts';
import { HTTP_LAYER_ERRORS } from '../http/route.ts';
import type { PlatformContext } from '../platform-context.ts';
import { hit } from '../shared/rate-limit.ts';
import { z } from '../shared/zod.ts';
import { chargeLocations } from './charge-locations.ts';

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
 * URL (its 32-character txid is not guessable), read as `chargeLocations` says.
 */
export function registerPixLocationRoutes(router: Router, registry: OpenAPIRegistry, { config, orm }: PlatformContext): void {
  const locations = chargeLocations(config);
  documentLocationRoutes(registry);

  router.get('/pix/jwks.json', (_req, res) => {
    res.set('cache-control', 'public, max-age=300').json(locations.keySet);
  });

  router.get('/pix/cob/:txid', async (req, res, next) => {
    try {
      const jws = await locations.read(orm.em.fork(), req.ip ?? 'unknown', req.params.txid);
      if (!jws) {
        res
          .status(404)
          .type('application/problem+json')
          .json(COB_PAYLOAD_NOT_FOUND);
        return;
      }
      // Paid and expired charges are still served, as the API Pix allows: their status and calendar tell the payer why
      // the charge cannot be paid, which a bare 404 would not.
      res.set('cache-control', 'no-store').type('application/jose').send(jws);
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
          x5c: z.array(z.string()).optional().openapi({ description: "PIX_SIGNING_CERT's chain, the key's certificate first (DER, standard base64)" }),
          x5t: z.string().optional().openapi({ description: "SHA-1 thumbprint of the key's certificate (base64url)" }),
          'x5t#S256': z.string().optional().openapi({ description: "SHA-256 thumbprint of the key's certificate (base64url)" }),
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

const EXAMPLE_JWS = 'eyJhbGciOiJFUzI1NiIsInR5cCI6IkpXUyIsImtpZCI6Ii4uLiIsImprdSI6Imh0dHBzOi8vYmFuay5leGFtcGxlL3BpeC9qd2tzLmpzb24ifQ.eyJ0eGlkIjoiLi4uIn0.c2lnbmF0dXJl';

/** Both locations are public and answer outside JSON's conventions where the Pix rules say so. */
function documentLocationRoutes(registry: OpenAPIRegistry): void {
  documentOperation(registry, {
    method: 'get',
    path: '/pix/cob/:txid',
    operationId: 'readChargeLocation',
    tags: ['Pix charges'],
    summary: "A charge's dynamic BR Code location: its payload (API Pix `cob`) as a JWS signed with the platform's key",
    description:
      "What a payer's institution fetches when a holder scans a charge. The JWS header carries `alg`, `typ` (`JWS`), `kid` and `jku` " +
      "(this host's /pix/jwks.json), and with a signing certificate its thumbprints `x5t` and `x5t#S256`. Paid, refunded and expired charges " +
      'are served too: their `status` and `calendario` say why they cannot be paid. Limited per client address (429 RATE_LIMITED).',
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
    // A location's reads are limited per client address (`hit`, in chargeLocations).
    errors: mergeErrors(HTTP_LAYER_ERRORS, errorsRaisedBy([hit])),
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
