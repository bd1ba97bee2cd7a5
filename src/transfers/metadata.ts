import { PLATFORM_ISPB } from '../shared/institution.ts';

interface Side {
  agency: string;
  number: string;
  holderName: string | null;
  holderDocument: string | null;
}

/** What a TEV's statement text says when the sender gave none. */
export const defaultTevDescription = (beneficiaryName: string | null) => `Transferência para ${beneficiaryName}`;

/** The beneficiary of a TEV as the sender's statement and payout show it (an internal current account). */
export function tevBeneficiary(destination: Side) {
  return {
    ispb: PLATFORM_ISPB,
    name: destination.holderName,
    branch: destination.agency,
    account: destination.number,
    document: destination.holderDocument,
    accountType: 'CACC',
    branchDigit: null,
    accountModel: 'INTERNAL',
  };
}
