/** The made-up bank of the sandbox's payers: whoever sends an incoming Pix or pays a charge through the sandbox routes. */
export const SANDBOX_PAYER = { ispb: '99999999', institution: 'Banco Sandbox S.A.', branch: '0001', account: '9999999' };
