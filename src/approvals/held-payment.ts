/**
 * The payment a request holds, as approvals keeps it: approvals reads only its kind; the module that holds and runs
 * payments (`payments/held-payment.ts`) writes the rest and reads it back.
 */
export interface ApprovalPayment {
  kind: 'TEV' | 'PIX' | 'BATCH';
}
