import { z } from './zod.ts';

/*
 * The wire formats of ids, cents, dates, documents and accounts, as zod schemas with their OpenAPI examples: the
 * building blocks of the API's response schemas (src/http/common-schemas.ts) and of the events' payloads
 * (src/events/catalog.ts). They describe what the platform writes; the test suites check what they receive against them.
 */

/** Holders, accounts, statement transactions, approval requests and events (decisions.md: UUID). */
export const uuid = (example = '3f2b8c1e-5d4a-4f7e-9b6c-2a1d0e9f8c7b') => z.uuid().openapi({ example });

/** Transfers, payouts, movements, ledger entries, Pix and core account ids, webhooks, charges: cuid2, 24 characters. */
export const cuid = (example = 'tq3v9x0k2m8w4r7y1b5n6c2z') => z.string().regex(/^[a-z][0-9a-z]{23}$/).openapi({ example });

/** A whole number of cents as a string. */
export const cents = (example = '1050') => z.string().regex(/^\d+$/).openapi({ example });

/** Cents as a string, negative for debits. */
export const signedCents = (example = '-1050') => z.string().regex(/^-?\d+$/).openapi({ example });

/** ISO 8601 in UTC (`Z`). */
export const utcDateTime = (example = '2026-11-22T13:45:07.123Z') => z.iso.datetime().openapi({ example });

/** ISO 8601 with a UTC offset (webhook records carry `-03:00`). */
export const offsetDateTime = (example = '2026-11-22T10:45:07.123-03:00') => z.iso.datetime({ offset: true }).openapi({ example });

/** `YYYY-MM-DD HH:mm:ss-03:00`: America/Sao_Paulo, a space separator and the offset (interface.md's "paymentDate"). */
export const paymentDate = () =>
  z
    .string()
    .regex(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}[+-]\d{2}:\d{2}$/)
    .openapi({ example: '2026-11-22 10:45:07-03:00' });

/** A CPF (11 digits) or a CNPJ (14 digits), digits only. */
export const documentNumber = (example = '52998224725') => z.string().regex(/^(\d{11}|\d{14})$/).openapi({ example });

/** Branch: 4 digits. */
export const branch = (example = '0001') => z.string().regex(/^\d{4}$/).openapi({ example });

/** Account number: digits. */
export const accountNumber = (example = '1000023') => z.string().regex(/^\d+$/).openapi({ example });

/** A TEV's public end-to-end id: a UUID (36 characters). */
export const tevEndToEndId = () => z.uuid().openapi({ example: '9d1c2b7e-0f4a-4e8b-a6d3-5c7e1f2a9b40' });

/** A Pix end-to-end id: `E` (a payment) or `D` (a return), the ISPB (8 digits), `yyyyMMddHHmm` in UTC, 11 letters or digits. */
export const pixEndToEndId = (example = 'E99999999202611221345aB3dE5fG7hJ') => z.string().regex(/^[ED]\d{20}[A-Za-z0-9]{11}$/).openapi({ example });
