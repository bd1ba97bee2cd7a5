import { Migration } from '@mikro-orm/migrations';

/** `***.456.789-**`: how a Pix payer is shown the receiver's CPF (only the 4th to 9th digits), as `documentShownToPayer`. */
const masked = (document: string) => `'***.' || substr(${document}, 4, 3) || '.' || substr(${document}, 7, 3) || '-**'`;

/**
 * Payouts recorded before the receiver's CPF was masked for the payer kept it whole, in the payout and in the
 * payer's debit movement, which the payout view and the statement read. They now show it as new payouts do. A CNPJ
 * (public) and the TEV's documents (the interface shows them whole) are left as they are. Events already sent are
 * history and stay as they were delivered.
 */
export const MASK_PAYER_VISIBLE_CPF = [
  `update pix_payout set beneficiary = jsonb_set(beneficiary, '{document}', to_jsonb(${masked("beneficiary->>'document'")}))
    where beneficiary->>'document' ~ '^[0-9]{11}$'`,
  `update movement set metadata = jsonb_set(metadata, '{beneficiary,document}', to_jsonb(${masked("metadata->'beneficiary'->>'document'")}))
    where channel = 'PIX' and direction = 'DEBIT' and metadata->'beneficiary'->>'document' ~ '^[0-9]{11}$'`,
];

export class Migration20261124000500_mask_payer_visible_cpf extends Migration {
  override name = 'Migration20261124000500_mask_payer_visible_cpf';

  override up(): void {
    for (const statement of MASK_PAYER_VISIBLE_CPF) this.addSql(statement);
  }

  override down(): void {
    // The digits masked away are not kept anywhere: there is nothing to restore.
  }
}
