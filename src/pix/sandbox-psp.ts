import { createHash } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { Account } from '../accounts/entities.ts';
import { Holder } from '../identity/entities.ts';
import { isValidCpf } from '../shared/documents.ts';
import { AppError } from '../shared/errors.ts';
import { Tenant } from '../tenants/entities.ts';
import { BANK_ISPB } from '../transfers/metadata.ts';
import { payCharge } from './charge-settlement.ts';
import { findChargeByTxid } from './charge-store.ts';
import { pixDocumentFetcher } from './document-client.ts';
import { pixEndToEndId } from './end-to-end.ts';
import type { PixKeyType } from './keys.ts';
import { receivePayoutReturn } from './payouts.ts';
import type { Beneficiary, PayoutSubmission, PixProvider, PixReturn, ProviderPayoutState } from './provider.ts';
import { txidOfOwnLocation } from './public-urls.ts';
import { failSandboxPayout, findSandboxPayout, insertSandboxPayout, insertSandboxReturn, settleSandboxPayoutNow } from './sandbox-psp-store.ts';

/** The simulated PSP's ISPB and the platform's ISPB as payer in its end-to-end ids. */
export const SANDBOX_PSP = { ispb: '99999999', institution: 'Banco Sandbox S.A.' };

/**
 * What the sandbox PSP does with a payout, chosen by its cents (amount % 100), so every state can be produced on
 * purpose; any other amount settles normally. Refunds come one settle delay after settlement.
 */
export const SANDBOX_OUTCOMES = {
  91: { outcome: 'FAILED', reason: 'Conta do recebedor encerrada' },
  92: { outcome: 'CANCELLED', reason: 'Pagamento cancelado pelo PSP do recebedor' },
  93: { outcome: 'POSTED', refund: 'total' },
  94: { outcome: 'POSTED', refund: 'half' },
} as const;

/** Why the platform, as the receiving institution, refused a payment of one of its charges: the payer's failure reason. */
const CHARGE_REFUSALS: Record<string, string> = {
  CHARGE_ALREADY_PAID: 'Cobrança já paga',
  CHARGE_EXPIRED: 'Cobrança expirada',
  CHARGE_AMOUNT_MISMATCH: 'Valor diferente do valor da cobrança',
  NOT_FOUND: 'Cobrança não encontrada',
  ACCOUNT_NOT_APPROVED: 'Conta do recebedor não aprovada',
  AMOUNT_BELOW_RECEIVE_FEE: 'Valor não cobre a tarifa do recebedor',
};

function digitsFrom(seed: string, length: number): string {
  const hex = createHash('sha256').update(seed).digest('hex');
  return Array.from(hex.slice(0, length), (c) => String(parseInt(c, 16) % 10)).join('');
}

/** A CPF stable for a seed, the sandbox's stand-in for a key owner's document: nine digits, then the valid check digits. */
function cpfFor(seed: string): string {
  for (let i = 0; ; i++) {
    const base = digitsFrom(`${seed}:${i}`, 9);
    // Exactly one two-digit ending makes nine digits a valid CPF; bases of one repeated digit have none.
    const cpf = Array.from({ length: 100 }, (_, end) => `${base}${String(end).padStart(2, '0')}`).find(isValidCpf);
    if (cpf) return cpf;
  }
}

export interface SandboxPspOptions {
  settleMs: number;
  /** The platform's public base: its own charge locations are paid to the platform itself. */
  publicBaseUrl: string;
  /** Where the wake of a paid charge's workflow is handed off. */
  taskQueue: string;
  /** Hosts whose documents are read whatever their address (PIX_LOCATION_ALLOWED_HOSTS). */
  allowedHosts: readonly string[];
  /** Outside the sandbox, any other institution's documents are read too, through the address guard. */
  readPublicHosts: boolean;
}

/**
 * The sandbox PSP: its own table (`sandbox_psp_payout`), settling after `settleMs`. It stands for the whole Pix network
 * around the platform: keys resolve to made-up receivers, except that a payment of one of the platform's own charges
 * (a scanned dynamic BR Code) reaches the platform itself, which pays the charge or refuses it.
 */
export function sandboxPsp(em: () => EntityManager, options: SandboxPspOptions): PixProvider {
  const fetchDocument = pixDocumentFetcher({ publicBaseUrl: options.publicBaseUrl, allowedHosts: options.allowedHosts, publicHosts: options.readPublicHosts });

  async function resolveKey(type: PixKeyType, key: string): Promise<Beneficiary> {
    const document = type === 'CPF' || type === 'CNPJ' ? key : cpfFor(key);
    return {
      ispb: SANDBOX_PSP.ispb,
      institution: SANDBOX_PSP.institution,
      name: `Recebedor Sandbox ${document.slice(-4)}`,
      document,
      branch: '0001',
      account: digitsFrom(key, 8),
      accountType: 'CACC',
    };
  }

  /** The platform's own charge a payment names: its location is served here and names the payload's txid. */
  const ownCharge = (charge: { location: string; txid: string } | null) => (charge && txidOfOwnLocation(options.publicBaseUrl, charge.location) === charge.txid ? charge.txid : null);

  /**
   * The platform receives the Pix: the charge is paid through the same path as every other payment of it, in the
   * transaction that records the payout here, so a retried submission never pays twice. A refusal fails the payout.
   */
  async function deliverToCharge(p: PayoutSubmission, txid: string): Promise<void> {
    await em().transactional(async (tx) => {
      const endToEndId = pixEndToEndId(BANK_ISPB);
      const submission = { payoutId: p.payoutId, amountCents: p.amountCents, endToEndId, outcome: 'POSTED' as const, reason: null, settleMs: options.settleMs, refund: null };
      if (!(await insertSandboxPayout(tx, submission))) return;
      const charge = await findChargeByTxid(tx, txid);
      try {
        if (!charge) throw new AppError(404, 'NOT_FOUND', 'Charge not found');
        await payCharge(tx, options.taskQueue, { tenantId: charge.tenantId, txid, amountCents: p.amountCents, payer: p.payer, endToEndId });
      } catch (err) {
        if (!(err instanceof AppError)) throw err;
        await failSandboxPayout(tx, p.payoutId, CHARGE_REFUSALS[err.code] ?? err.message);
      }
    });
  }

  return {
    resolveKey,

    async resolveChargeReceiver(charge) {
      const txid = ownCharge(charge);
      if (!txid) return resolveKey(charge.pixKeyType, charge.pixKey);
      const reader = em();
      const found = await findChargeByTxid(reader, txid);
      if (!found) return null;
      const account = await reader.findOneOrFail(Account, { id: found.accountId });
      const holder = await reader.findOneOrFail(Holder, { id: account.holderId! });
      const tenant = await reader.findOneOrFail(Tenant, { id: account.tenantId });
      return { ispb: BANK_ISPB, institution: tenant.name, name: holder.name, document: holder.document, branch: account.agency, account: account.number, accountType: 'CACC' };
    },

    fetchDocument,

    async submitPayout(p: PayoutSubmission): Promise<void> {
      const txid = ownCharge(p.charge);
      if (txid) return deliverToCharge(p, txid);
      const rule = SANDBOX_OUTCOMES[Number(p.amountCents % 100n) as keyof typeof SANDBOX_OUTCOMES];
      const refund = rule && 'refund' in rule ? (rule.refund === 'total' ? p.amountCents : p.amountCents / 2n) : 0n;
      await insertSandboxPayout(em(), {
        payoutId: p.payoutId,
        amountCents: p.amountCents,
        endToEndId: pixEndToEndId(BANK_ISPB),
        outcome: rule?.outcome ?? 'POSTED',
        reason: rule && 'reason' in rule ? rule.reason : null,
        settleMs: options.settleMs,
        refund: refund > 0n ? { cents: refund, endToEndId: pixEndToEndId(SANDBOX_PSP.ispb) } : null,
      });
    },

    async queryPayout(payoutId: string): Promise<ProviderPayoutState> {
      const r = await findSandboxPayout(em(), payoutId);
      if (!r || !r.settled) return { state: 'PROCESSING' };
      if (r.outcome !== 'POSTED') return { state: r.outcome, endToEndId: r.endToEndId, reason: r.reason ?? r.outcome };
      return {
        state: 'POSTED',
        endToEndId: r.endToEndId,
        settledAt: r.settlesAt,
        refund: r.refunded ? { endToEndId: r.refundEndToEndId!, amountCents: r.refundCents.toString(), refundedAt: r.refundsAt! } : null,
      };
    },

    /**
     * A return of a Pix that one of the platform's payouts sent (a holder paid a charge of the platform by scanning
     * it) reaches the platform as the payer's institution, in the transaction that records it here: the payout is
     * credited at once, whether or not its workflow still watches for a refund. Any other payer is beyond the sandbox.
     */
    async returnPix(r: PixReturn): Promise<void> {
      await em().transactional(async (tx) => {
        const recorded = await insertSandboxReturn(tx, r);
        if (!recorded?.payoutId) return;
        const settled = await settleSandboxPayoutNow(tx, recorded.payoutId);
        const refund = { endToEndId: r.endToEndId, amountCents: r.amountCents.toString(), refundedAt: recorded.returnedAt };
        await receivePayoutReturn(tx, recorded.payoutId, { state: 'POSTED', ...settled, refund });
      });
    },
  };
}
