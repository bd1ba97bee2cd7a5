/** The ledger's vocabulary, as its reads name what the posting functions wrote. */

export type EntryKind = 'PRIMARY' | 'FEE' | 'REVERSAL';
export type MovementSource = 'TEF_OUT' | 'TEF_IN' | 'PIX_OUT' | 'QR_CODE_OUT' | 'PIX_IN' | 'FEE_REVENUE' | 'SETTLEMENT' | 'REVERSAL';
/** A payout's state on its debit movement (statement section 2.5). */
export type MovementPayoutStatus = 'PENDING' | 'PROCESSING' | 'POSTED' | 'FAILED' | 'CANCELLED' | 'REFUNDED';
