import { finished } from 'node:stream/promises';
import type { Writable } from 'node:stream';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Account } from '../accounts/entities.ts';
import type { Holder } from '../identity/entities.ts';
import { exportPage, lastMovementAt } from '../ledger/store.ts';
import { brandOf } from '../tenants/service.ts';
import { CSV_HEADER, csvRows, ofxEnd, ofxRows, ofxStart, StatementPdf, type ExportHeader } from './export-formats.ts';

export const EXPORT_TYPES = { csv: 'text/csv', ofx: 'application/x-ofx', pdf: 'application/pdf' } as const;
export type ExportType = (typeof EXPORT_TYPES)[keyof typeof EXPORT_TYPES];

/** Movements read per query: enough to keep the database busy, few enough that a page is a few hundred kilobytes. */
const PAGE = 2_000;

/** Waits until `out` takes more, so that a slow client holds back the reading instead of filling the api's memory. */
async function drained(out: Writable): Promise<void> {
  if (!out.writableNeedDrain) return;
  // Whichever comes first; both listeners go then, so a long export does not pile them up on the response.
  await new Promise<void>((resolve) => {
    const done = () => {
      out.off('drain', done);
      out.off('close', done);
      resolve();
    };
    out.on('drain', done);
    out.on('close', done);
  });
}

/**
 * Streams the account's statement of a date range (the statement's: UTC days, inclusive) to `out` as CSV, OFX or PDF.
 * It reads a page of movements at a time (keyset, exportPage) and writes it before reading the next, so an account
 * with a million movements exports in constant memory; a client that goes away ends it.
 */
export async function writeStatementExport(
  em: EntityManager,
  holder: Holder,
  account: Account,
  range: { startDate: string; endDate: string },
  type: ExportType,
  out: Writable,
): Promise<void> {
  const beforeRange = new Date(Date.parse(`${range.startDate}T00:00:00.000Z`) - 1).toISOString();
  const opening = await lastMovementAt(em, account.id, beforeRange);
  const header: ExportHeader = {
    holderName: holder.name,
    brandName: (await brandOf(em, account.tenantId)).name,
    bank: account.bank,
    branch: account.agency,
    account: account.number,
    ...range,
    openingCents: BigInt(opening?.balance_after_cents ?? 0),
    now: new Date(),
  };
  const pdf = type === EXPORT_TYPES.pdf ? new StatementPdf(header) : null;
  if (pdf) pdf.doc.pipe(out);
  else out.write(type === EXPORT_TYPES.csv ? CSV_HEADER : ofxStart(header));

  let closing = header.openingCents;
  let after: { at: string; id: string } | null = null;
  for (;;) {
    const rows = await exportPage(em, account.id, range, after, PAGE);
    if (rows.length > 0) {
      const last = rows[rows.length - 1]!;
      closing = BigInt(last.balance_after_cents);
      after = { at: last.position, id: last.id };
      if (pdf) pdf.rows(rows);
      else out.write(type === EXPORT_TYPES.csv ? csvRows(rows) : ofxRows(rows));
      await drained(out);
      if (out.destroyed) return;
    }
    if (rows.length < PAGE) break;
  }
  if (pdf) pdf.end();
  else out.end(type === EXPORT_TYPES.ofx ? ofxEnd(header, closing) : undefined);
  await finished(out);
}
