/** The ledger's vocabulary: what a posting writes, and what it reads back. */

export type EntryKind = 'PRIMARY' | 'FEE' | 'REVERSAL';
export type MovementSource = 'TEF_OUT' | 'TEF_IN' | 'PIX_OUT' | 'QR_CODE_OUT' | 'PIX_IN' | 'FEE_REVENUE' | 'SETTLEMENT' | 'REVERSAL';
/** A payout's state on its debit movement (statement section 2.5). */
export type MovementPayoutStatus = 'PENDING' | 'PROCESSING' | 'POSTED' | 'FAILED' | 'CANCELLED' | 'REFUNDED';

export interface LockedAccount {
  id: string;
  tenantId: string;
  kind: 'HOLDER' | 'FEE_REVENUE' | 'SETTLEMENT';
  status: 'PENDING' | 'APPROVED' | 'REJECTED';
  balanceCents: bigint;
  agency: string;
  number: string;
  pixAccountId: string;
  /** The one rule for whether the account may send or receive money (`account_may_move_money`, in SQL). */
  mayMoveMoney: boolean;
  holderName: string | null;
  holderDocument: string | null;
}

export interface MovementInput {
  accountId: string;
  tenantId: string;
  /** The operation (tevId, payoutId…) the movement belongs to: one per operation, account and source. */
  operationId: string;
  source: MovementSource;
  channel: 'TEF' | 'PIX';
  direction: 'DEBIT' | 'CREDIT';
  status: 'DONE' | 'PENDING' | 'FAILED';
  payoutStatus: MovementPayoutStatus | null;
  statusExternal: string;
  amountCents: bigint;
  feeCents: bigint;
  description: string;
  externalRef: string | null;
  endToEndId: string | null;
  reversesMovementId: string | null;
  metadata: Record<string, unknown>;
  /** Signed cents, applied in order; the movement's entries. */
  lines: { kind: EntryKind; amountCents: bigint }[];
}

export interface PostedEntry {
  id: string;
  kind: EntryKind;
  amountCents: bigint;
  balanceAfterCents: bigint;
}

export interface PostedMovement {
  id: string;
  statementId: string;
  accountId: string;
  balanceAfterCents: bigint;
  createdAt: string;
  entries: PostedEntry[];
}
