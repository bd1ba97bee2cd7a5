import type { LockedAccount } from '../ledger/posting.ts';

/** The platform's own ISPB in statements (bank 000 settles internally). */
export const BANK_ISPB = '00000000';

/** Section 2.5/2.6 metadata of a TEV, from each side's point of view. */
export function tevMetadata(source: LockedAccount, destination: LockedAccount, when: { date: string; endToEndId: string; paymentDate: string }) {
  return {
    outgoing: {
      ...when,
      payer: { branch: source.agency, account: source.number },
      beneficiary: {
        ispb: BANK_ISPB,
        name: destination.holderName,
        branch: destination.agency,
        account: destination.number,
        document: destination.holderDocument,
        accountType: 'CACC',
        branchDigit: null,
        accountModel: 'INTERNAL',
      },
    },
    incoming: {
      ...when,
      payer: { ispb: BANK_ISPB, name: source.holderName, branch: source.agency, account: source.number, document: source.holderDocument },
      beneficiary: { branch: destination.agency, account: destination.number },
    },
  };
}
