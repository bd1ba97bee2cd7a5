import type { Router } from 'express';
import type { Services } from '../services.ts';
import { findChargeByTxid } from './charge-store.ts';
import { cobPayloadOf, receiverKeyOf } from './cob-payload.ts';
import { keySetUrl } from './public-urls.ts';
import { platformSigner } from './signing-key.ts';

const TXID = /^[A-Za-z0-9]{26,35}$/;

/**
 * What payers' institutions read when a holder scans a charge's dynamic BR Code: the location `/pix/cob/<txid>` serves
 * the charge's payload as a JWS (`application/jose`), signed with the platform's key, whose public half is at
 * `/pix/jwks.json` (the `jku` of every payload). Both are public, as the Pix rules require: a location is a capability
 * URL (its 32-character txid is not guessable). Not JSON endpoints, so they stand outside the OpenAPI documents.
 */
export function registerPixLocationRoutes(router: Router, { config, orm }: Services): void {
  const signer = platformSigner(config);
  const jku = keySetUrl(config.publicBaseUrl);

  router.get('/pix/jwks.json', (_req, res) => {
    res.set('cache-control', 'public, max-age=300').json({ keys: [signer.publicJwk] });
  });

  router.get('/pix/cob/:txid', async (req, res, next) => {
    try {
      const txid = req.params.txid;
      const charge = TXID.test(txid) ? await findChargeByTxid(orm.em.fork(), txid) : null;
      if (!charge) {
        // API Pix error `CobPayloadNaoEncontrado` (RFC 7807), with the platform's own `code` and `message` beside it.
        res
          .status(404)
          .type('application/problem+json')
          .json({
            type: 'https://pix.bcb.gov.br/api/v2/error/CobPayloadNaoEncontrado',
            title: 'Cobrança não encontrada',
            status: 404,
            detail: 'Nenhuma cobrança nesta location',
            code: 'NOT_FOUND',
            message: 'Charge not found',
          });
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
