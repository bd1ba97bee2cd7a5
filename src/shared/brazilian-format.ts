/**
 * Amounts and times as a Brazilian reader expects them on paper (receipts, statement PDFs): `R$ 1.234,56`,
 * `22/11/2026 10:45:07`. Built by hand rather than with Intl, whose pt-BR currency puts a no-break space after `R$`.
 */

/** Reais (a number with at most two decimals, or cents as bigint) as `R$ 1.234,56`; negatives as `-R$ 1,50`. */
export function brl(amount: number | bigint): string {
  const cents = typeof amount === 'bigint' ? amount : BigInt(Math.round(amount * 100));
  const abs = cents < 0n ? -cents : cents;
  const whole = (abs / 100n).toString().replace(/\B(?=(\d{3})+(?!\d))/g, '.');
  return `${cents < 0n ? '-' : ''}R$ ${whole},${(abs % 100n).toString().padStart(2, '0')}`;
}

/** `YYYY-MM-DD HH:mm:ss-03:00` (a paymentDate) as `DD/MM/YYYY HH:mm:ss`. */
export function brazilianDateTime(paymentDate: string): string {
  const [date, time] = paymentDate.split(' ');
  const [y, m, d] = date!.split('-');
  return `${d}/${m}/${y} ${time!.slice(0, 8)}`;
}

/** A CNPJ written as `12.345.678/0001-90`; anything else (a CPF already masked) as it is. */
export const formattedDocument = (document: string): string =>
  /^\d{14}$/.test(document) ? document.replace(/^(\d{2})(\d{3})(\d{3})(\d{4})(\d{2})$/, '$1.$2.$3/$4-$5') : document;
