/** The ledger's vocabulary, as its reads name what the posting functions wrote. */

export type EntryKind = 'PRIMARY' | 'FEE' | 'REVERSAL';
/**
 * `TEF_OUT`, `TEF_IN` and the statement's type `TEF` (channel `TEF`) are the interface's names for a TEV's movements
 * (interface.md sections 2.5 and 2.6: "sends made via TEV payment appear as `TEF`"): clients read them, so they stay,
 * while the code names the operation itself a TEV.
 */
export type MovementSource = 'TEF_OUT' | 'TEF_IN' | 'PIX_OUT' | 'QR_CODE_OUT' | 'PIX_IN' | 'FEE_REVENUE' | 'SETTLEMENT' | 'REVERSAL';
/** A payout's state on its debit movement (statement section 2.5). */
export type MovementPayoutStatus = 'PENDING' | 'PROCESSING' | 'POSTED' | 'FAILED' | 'CANCELLED' | 'REFUNDED';
