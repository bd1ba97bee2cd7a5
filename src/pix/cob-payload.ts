import { createHmac } from 'node:crypto';
import { z } from '../shared/zod.ts';
import { reaisText } from './brcode.ts';
import type { PixCharge } from './charge-store.ts';

/**
 * The payload a dynamic BR Code's location serves (API Pix `CobPayload`, a charge for immediate payment), signed as a
 * JWS. The receiver's institution writes it; the payer's reads it, after checking the signature.
 */

/** API Pix charge statuses: a charge stays ATIVA past its expiry (`calendario` tells), CONCLUIDA once paid. */
export const COB_STATUSES = ['ATIVA', 'CONCLUIDA', 'REMOVIDA_PELO_USUARIO_RECEBEDOR', 'REMOVIDA_PELO_PSP'] as const;

/** Issuers write some integers as digit strings (`"expiracao": "3600"`); both forms are read. */
const count = z.union([z.number().int().min(0), z.string().regex(/^\d{1,10}$/).transform(Number)]);

/** What the payer's institution needs of a payload; other fields of the API Pix (devedor, infoAdicionais…) pass. */
export const CobPayload = z.looseObject({
  txid: z.string().regex(/^[A-Za-z0-9]{26,35}$/, 'txid must be 26 to 35 letters and digits'),
  revisao: count,
  calendario: z.looseObject({
    criacao: z.iso.datetime({ offset: true }),
    apresentacao: z.iso.datetime({ offset: true }).optional(),
    /** Seconds after `criacao`; the API Pix default is 86400. */
    expiracao: count.default(86_400),
  }),
  status: z.enum(COB_STATUSES),
  valor: z.looseObject({
    original: z.string().regex(/^\d{1,10}\.\d{2}$/, 'valor.original must look like 10.50'),
    /** 1: the payer may change the amount (API Pix `CobValor`); 0, the default: the amount is fixed. */
    modalidadeAlteracao: count.pipe(z.union([z.literal(0), z.literal(1)])).optional(),
  }),
  chave: z.string().min(1).max(77),
});
export type CobPayload = z.output<typeof CobPayload>;

/**
 * The key the platform's charge payloads name as the receiver's (`chave`, mandatory in a payload): a random key (EVP)
 * per account, derived from its id with the pepper, so it names the account without disclosing its id or its holder's
 * document.
 */
export function receiverKeyOf(pepper: string, accountId: string): string {
  const bytes = createHmac('sha256', pepper).update(`pix-receiver-key:${accountId}`).digest().subarray(0, 16);
  bytes[6] = (bytes[6]! & 0x0f) | 0x40;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** A charge of the platform as its location presents it at `now`: ATIVA (expired or not; `calendario` says) or CONCLUIDA. */
export function cobPayloadOf(charge: Pick<PixCharge, 'txid' | 'createdAt' | 'expiresAt' | 'status' | 'amountCents'>, receiverKey: string, now: Date) {
  return {
    txid: charge.txid,
    revisao: 0,
    calendario: {
      criacao: charge.createdAt,
      apresentacao: now.toISOString(),
      expiracao: Math.round((Date.parse(charge.expiresAt) - Date.parse(charge.createdAt)) / 1000),
    },
    status: charge.status === 'PAID' ? 'CONCLUIDA' : 'ATIVA',
    valor: { original: reaisText(charge.amountCents) },
    chave: receiverKey,
  } satisfies z.input<typeof CobPayload>;
}
