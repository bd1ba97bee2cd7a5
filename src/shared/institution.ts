/**
 * This platform's own ISPB, wherever it names itself to the Pix network or in a statement: the payer of its payouts,
 * the institution of its own charges' receivers and of its devoluções, both sides of a TEV (bank 000 settles internally;
 * `settle_tev` writes the same digits into a TEV's metadata, from `platform_ispb()` in src/ledger/sql/rules.sql, which
 * test/domain/rules.test.ts checks against this).
 */
export const PLATFORM_ISPB = '00000000';
