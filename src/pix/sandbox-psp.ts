import { createHash } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { isValidCpf } from '../shared/documents.ts';
import { pixEndToEndId } from './end-to-end.ts';
import type { PixKeyType } from './keys.ts';
import type { Beneficiary, PayoutSubmission, PixProvider, ProviderPayoutState } from './provider.ts';

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

function digitsFrom(seed: string, length: number): string {
  const hex = createHash('sha256').update(seed).digest('hex');
  return Array.from(hex.slice(0, length), (c) => String(parseInt(c, 16) % 10)).join('');
}

/** A CPF with valid check digits, stable for a seed: the sandbox's stand-in for the key owner's document. */
function cpfFor(seed: string): string {
  for (let i = 0; ; i++) {
    const base = digitsFrom(`${seed}:${i}`, 9);
    const digit = (d: string, w: number) => {
      const r = Array.from(d).reduce((s, c, k) => s + Number(c) * (w - k), 0) % 11;
      return r < 2 ? 0 : 11 - r;
    };
    const first = digit(base, 10);
    const cpf = `${base}${first}${digit(`${base}${first}`, 11)}`;
    if (isValidCpf(cpf)) return cpf;
  }
}

interface Row {
  end_to_end_id: string;
  outcome: 'POSTED' | 'FAILED' | 'CANCELLED';
  reason: string | null;
  refund_cents: string;
  refund_end_to_end_id: string | null;
  settles_at: string;
  refunds_at: string | null;
  settled: boolean;
  refunded: boolean;
}

/** The sandbox PSP: its own table (`sandbox_psp_payout`), settling after `settleMs`. */
export function sandboxPsp(em: () => EntityManager, settleMs: number): PixProvider {
  return {
    async resolveKey(type: PixKeyType, key: string): Promise<Beneficiary> {
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
    },

    async submitPayout(p: PayoutSubmission): Promise<void> {
      const rule = SANDBOX_OUTCOMES[Number(p.amountCents % 100n) as keyof typeof SANDBOX_OUTCOMES];
      const refund = rule && 'refund' in rule ? (rule.refund === 'total' ? p.amountCents : p.amountCents / 2n) : 0n;
      await em().execute(
        `insert into sandbox_psp_payout (payout_id, amount_cents, end_to_end_id, outcome, reason, refund_cents, refund_end_to_end_id, settles_at, refunds_at)
         values (?, ?, ?, ?, ?, ?, ?, now() + ? * interval '1 millisecond', ${refund > 0n ? "now() + 2 * ? * interval '1 millisecond'" : 'null'})
         on conflict (payout_id) do nothing`,
        [
          p.payoutId, p.amountCents.toString(), pixEndToEndId('00000000'), rule?.outcome ?? 'POSTED', rule && 'reason' in rule ? rule.reason : null,
          refund.toString(), refund > 0n ? pixEndToEndId(SANDBOX_PSP.ispb) : null, settleMs, ...(refund > 0n ? [settleMs] : []),
        ],
      );
    },

    async queryPayout(payoutId: string): Promise<ProviderPayoutState> {
      const [r] = await em().execute<Row[]>(
        `select *, settles_at <= now() as settled, coalesce(refunds_at <= now(), false) as refunded from sandbox_psp_payout where payout_id = ?`,
        [payoutId],
      );
      if (!r || !r.settled) return { state: 'PROCESSING' };
      if (r.outcome !== 'POSTED') return { state: r.outcome, endToEndId: r.end_to_end_id, reason: r.reason ?? r.outcome };
      return {
        state: 'POSTED',
        endToEndId: r.end_to_end_id,
        settledAt: new Date(r.settles_at).toISOString(),
        refund: r.refunded ? { endToEndId: r.refund_end_to_end_id!, amountCents: r.refund_cents, refundedAt: new Date(r.refunds_at!).toISOString() } : null,
      };
    },
  };
}
