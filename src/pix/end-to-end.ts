import { randomInt } from 'node:crypto';

const ALPHANUMERIC = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** Pix end-to-end id (32 chars): `E` + the payer PSP's 8-digit ISPB + `yyyyMMddHHmm` in UTC + 11 alphanumerics. */
export function pixEndToEndId(ispb: string, at: Date = new Date()): string {
  const stamp = at.toISOString().replace(/[-:T]/g, '').slice(0, 12);
  const tail = Array.from({ length: 11 }, () => ALPHANUMERIC[randomInt(ALPHANUMERIC.length)]).join('');
  return `E${ispb.padStart(8, '0')}${stamp}${tail}`;
}
