import { createHash } from 'node:crypto';
import type { PixKeyType } from '../../pix/keys.ts';
import { cpfWithCheckDigits, isValidCpf } from '../../shared/documents.ts';

/**
 * The made-up Pix network around the platform, as the sandbox PSP answers for it: the institution that holds every
 * key's account, the owners of the keys, and what the cents of a payout make happen.
 */

/** The institution behind every key the sandbox directory answers for, and that returns (devolve) their Pix. */
export const SANDBOX_PSP = { ispb: '99999999', institution: 'Banco Sandbox S.A.' };

/**
 * What the sandbox PSP does with a payout, chosen by its cents (amount % 100), so every state can be produced on
 * purpose; any other amount settles normally. Returns come one settle delay after settlement.
 */
export const SANDBOX_OUTCOMES = {
  91: { outcome: 'FAILED', reason: 'Conta do recebedor encerrada' },
  92: { outcome: 'CANCELLED', reason: 'Pagamento cancelado pelo PSP do recebedor' },
  93: { outcome: 'POSTED', returned: 'total' },
  94: { outcome: 'POSTED', returned: 'half' },
} as const;

export interface CentsOutcome {
  outcome: 'POSTED' | 'FAILED' | 'CANCELLED';
  reason: string | null;
  /** What the receiver returns one settle delay after settlement; 0 for none. */
  returnedCents: bigint;
}

export function outcomeOfCents(amountCents: bigint): CentsOutcome {
  const rule = SANDBOX_OUTCOMES[Number(amountCents % 100n) as keyof typeof SANDBOX_OUTCOMES];
  if (!rule) return { outcome: 'POSTED', reason: null, returnedCents: 0n };
  if ('reason' in rule) return { outcome: rule.outcome, reason: rule.reason, returnedCents: 0n };
  return { outcome: rule.outcome, reason: null, returnedCents: rule.returned === 'total' ? amountCents : amountCents / 2n };
}

/**
 * Why the receiving institution (the platform, for a payment of one of its charges) refused a Pix, by the code it
 * answered: the reason the payer's payout fails with.
 */
export const CHARGE_REFUSALS: Record<string, string> = {
  CHARGE_ALREADY_PAID: 'Cobrança já paga',
  CHARGE_EXPIRED: 'Cobrança expirada',
  CHARGE_AMOUNT_MISMATCH: 'Valor diferente do valor da cobrança',
  NOT_FOUND: 'Cobrança não encontrada',
  RECEIVER_NOT_FOUND: 'Conta do recebedor não encontrada',
  ACCOUNT_NOT_APPROVED: 'Conta do recebedor não aprovada',
  ACCOUNT_NOT_ACTIVE: 'Conta do recebedor bloqueada ou encerrada',
  AMOUNT_BELOW_RECEIVE_FEE: 'Valor não cobre a tarifa do recebedor',
};

function digitsFrom(seed: string, length: number): string {
  const hex = createHash('sha256').update(seed).digest('hex');
  return Array.from(hex.slice(0, length), (c) => String(parseInt(c, 16) % 10)).join('');
}

/**
 * A CPF stable for a seed, the sandbox's stand-in for a key owner's document: nine digits, then their check digits.
 * Nine digits of one repeated digit make no valid CPF: the next seed is tried.
 */
function cpfFor(seed: string): string {
  for (let i = 0; ; i++) {
    const cpf = cpfWithCheckDigits(digitsFrom(`${seed}:${i}`, 9));
    if (isValidCpf(cpf)) return cpf;
  }
}

/** A directory (DICT) entry: the key, the account it points to and its owner. */
export interface DictEntry {
  key: string;
  keyType: PixKeyType;
  account: { participant: string; participantName: string; branch: string; accountNumber: string; accountType: 'CACC' };
  owner: { type: 'NATURAL_PERSON' | 'LEGAL_PERSON'; taxIdNumber: string; name: string };
}

/**
 * The keys no one holds in the sandbox directory, so that a payment or a batch can meet an unknown key on purpose: the
 * EVP keys whose first group is `00000000` (a random EVP key starts so once in four billion).
 */
export const isUnregisteredKey = (keyType: PixKeyType, key: string): boolean => keyType === 'EVP' && key.startsWith('00000000-');

/**
 * Every other valid key has an owner here: a CPF or CNPJ key is its owner's document, any other key gets a made-up
 * CPF. Null for an unregistered key.
 */
export function dictEntry(keyType: PixKeyType, key: string): DictEntry | null {
  if (isUnregisteredKey(keyType, key)) return null;
  const document = keyType === 'CPF' || keyType === 'CNPJ' ? key : cpfFor(key);
  return {
    key,
    keyType,
    account: { participant: SANDBOX_PSP.ispb, participantName: SANDBOX_PSP.institution, branch: '0001', accountNumber: digitsFrom(key, 8), accountType: 'CACC' },
    owner: { type: document.length === 14 ? 'LEGAL_PERSON' : 'NATURAL_PERSON', taxIdNumber: document, name: `Recebedor Sandbox ${document.slice(-4)}` },
  };
}
