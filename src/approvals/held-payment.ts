import type { PayoutRequest } from '../pix/payouts.ts';

/** What a held payment will do once approved: a TEV to an account, or a Pix payout to a key. */
export type HeldPayment =
  | { kind: 'TEV'; destinationAccountId: string; amountCents: string; description: string | null; externalRef: string | null }
  | { kind: 'PIX'; channel: PayoutRequest['channel']; amountCents: string; pixKey: string; pixKeyType: PayoutRequest['pixKeyType']; beneficiary: PayoutRequest['beneficiary']; qr: PayoutRequest['qr']; description: string };
