import PDFDocument from 'pdfkit';
import { brazilianDateTime, brl } from '../shared/brazilian-format.ts';
import type { ExportRow } from '../ledger/store.ts';

/**
 * The three statement export formats, each as a writer of pieces: its start (with the balance before the range), each
 * page of movements as it is read, its end (with the balance after). The CSV and OFX writers return text; the PDF one
 * draws into a pdfkit document that streams itself.
 */
export interface ExportHeader {
  holderName: string;
  brandName: string;
  bank: string;
  branch: string;
  account: string;
  startDate: string;
  endDate: string;
  openingCents: bigint;
  /** When the export was made. */
  now: Date;
}

/** Cents (text, signed) as reais with two decimals and a point: `-1234.50`. */
export function reaisText(cents: string | bigint): string {
  const text = typeof cents === 'bigint' ? cents.toString() : cents;
  const negative = text.startsWith('-');
  const digits = (negative ? text.slice(1) : text).padStart(3, '0');
  return `${negative ? '-' : ''}${digits.slice(0, -2)}.${digits.slice(-2)}`;
}

// CSV (RFC 4180): a header row, CRLF line ends, a field quoted when it holds a comma, a quote or a line end. A text
// field starting with = + - @ or a tab is prefixed with ' so that a spreadsheet shows it instead of running it.
export const CSV_HEADER = 'date,createdAt,transactionId,type,direction,description,counterpart,amount,fee,balanceAfter,endToEndId,status\r\n';

const csvText = (value: string | null): string => {
  if (value === null) return '';
  const safe = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
};

export function csvRows(rows: ExportRow[]): string {
  let out = '';
  for (const r of rows) {
    out += `${r.local_time},${r.created_at},${r.statement_id},${r.channel},${r.direction},${csvText(r.description)},${csvText(r.counterpart)},${reaisText(r.net_cents)},${reaisText(r.fee_cents)},${reaisText(r.balance_after_cents)},${r.end_to_end_id ?? ''},${r.status}\r\n`;
  }
  return out;
}

// OFX 1.0.2 (SGML), the version Brazilian banks export and Brazilian accounting software imports: leaf elements
// without end tags, aggregates with them, UTF-8. Times are Brasília's wall clock with its offset, as banks write them.
const ofxText = (value: string, max: number): string =>
  value
    .slice(0, max)
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;');

const ofxDay = (date: string, end: boolean) => `${date.replace(/-/g, '')}${end ? '235959' : '000000'}[-3:BRT]`;

export function ofxStart(h: ExportHeader): string {
  const server = h.now.toISOString().replace(/[-:T]/g, '').slice(0, 14);
  return (
    'OFXHEADER:100\r\nDATA:OFXSGML\r\nVERSION:102\r\nSECURITY:NONE\r\nENCODING:UTF-8\r\nCHARSET:NONE\r\nCOMPRESSION:NONE\r\nOLDFILEUID:NONE\r\nNEWFILEUID:NONE\r\n\r\n' +
    '<OFX>\r\n<SIGNONMSGSRSV1>\r\n<SONRS>\r\n<STATUS>\r\n<CODE>0\r\n<SEVERITY>INFO\r\n</STATUS>\r\n' +
    `<DTSERVER>${server}[0:GMT]\r\n<LANGUAGE>POR\r\n</SONRS>\r\n</SIGNONMSGSRSV1>\r\n` +
    '<BANKMSGSRSV1>\r\n<STMTTRNRS>\r\n<TRNUID>1\r\n<STATUS>\r\n<CODE>0\r\n<SEVERITY>INFO\r\n</STATUS>\r\n<STMTRS>\r\n<CURDEF>BRL\r\n' +
    `<BANKACCTFROM>\r\n<BANKID>${h.bank}\r\n<BRANCHID>${h.branch}\r\n<ACCTID>${h.account}\r\n<ACCTTYPE>CHECKING\r\n</BANKACCTFROM>\r\n` +
    `<BANKTRANLIST>\r\n<DTSTART>${ofxDay(h.startDate, false)}\r\n<DTEND>${ofxDay(h.endDate, true)}\r\n`
  );
}

export function ofxRows(rows: ExportRow[]): string {
  let out = '';
  for (const r of rows) {
    const posted = `${r.local_time.replace(/[- :]/g, '')}[${r.local_offset}:BRT]`;
    out +=
      `<STMTTRN>\r\n<TRNTYPE>${r.net_cents.startsWith('-') ? 'DEBIT' : 'CREDIT'}\r\n<DTPOSTED>${posted}\r\n<TRNAMT>${reaisText(r.net_cents)}\r\n` +
      `<FITID>${r.statement_id}\r\n${r.counterpart ? `<NAME>${ofxText(r.counterpart, 32)}\r\n` : ''}<MEMO>${ofxText(r.description, 255)}\r\n</STMTTRN>\r\n`;
  }
  return out;
}

export function ofxEnd(h: ExportHeader, closingCents: bigint): string {
  return `</BANKTRANLIST>\r\n<LEDGERBAL>\r\n<BALAMT>${reaisText(closingCents)}\r\n<DTASOF>${ofxDay(h.endDate, true)}\r\n</LEDGERBAL>\r\n</STMTRS>\r\n</STMTTRNRS>\r\n</BANKMSGSRSV1>\r\n</OFX>\r\n`;
}

const COLUMNS = ['Data', 'Descrição', 'Valor', 'Saldo'] as const;

/** The statement as a bank's PDF: the period, the opening balance, each movement, each day's closing balance, the closing balance. */
export class StatementPdf {
  readonly doc: PDFKit.PDFDocument;
  private day: string | null = null;
  private balance: bigint;

  constructor(h: ExportHeader) {
    this.balance = h.openingCents;
    this.doc = new PDFDocument({ size: 'A4', margin: 40, bufferPages: false, info: { Title: `Extrato ${h.startDate} a ${h.endDate}`, Author: h.brandName } });
    const d = this.doc;
    d.font('Helvetica-Bold').fontSize(18).fillColor('#0b5cad').text(h.brandName);
    d.font('Helvetica-Bold').fontSize(14).fillColor('#1f2933').text('Extrato de conta corrente');
    d.font('Helvetica').fontSize(10).text(`${h.holderName} - Agência ${h.branch} - Conta ${h.account}`);
    d.text(`Período: ${h.startDate.split('-').reverse().join('/')} a ${h.endDate.split('-').reverse().join('/')} (datas UTC; horários de Brasília)`);
    d.moveDown(0.5).font('Helvetica-Bold').text(`Saldo anterior: ${brl(h.openingCents)}`);
    d.moveDown(0.5);
    this.line(COLUMNS, true);
  }

  private line(cells: readonly [string, string, string, string], bold = false): void {
    const d = this.doc;
    if (d.y > d.page.height - 60) {
      d.addPage();
      this.line(COLUMNS, true);
    }
    const y = d.y;
    d.font(bold ? 'Helvetica-Bold' : 'Helvetica').fontSize(8).fillColor('#1f2933');
    d.text(cells[0], 40, y, { width: 85, lineBreak: false });
    d.text(cells[1], 130, y, { width: 255, lineBreak: false, ellipsis: true });
    d.text(cells[2], 390, y, { width: 80, align: 'right', lineBreak: false });
    d.text(cells[3], 475, y, { width: 80, align: 'right', lineBreak: false });
    d.x = 40;
    d.y = y + 12;
  }

  private closeDay(): void {
    if (this.day !== null) this.line([brazilianDateTime(`${this.day} 00:00:00`).slice(0, 10), 'Saldo do dia', '', brl(this.balance)], true);
  }

  rows(rows: ExportRow[]): void {
    for (const r of rows) {
      const day = r.local_time.slice(0, 10);
      if (day !== this.day) {
        this.closeDay();
        this.day = day;
      }
      this.balance = BigInt(r.balance_after_cents);
      this.line([brazilianDateTime(r.local_time), r.counterpart ? `${r.description} - ${r.counterpart}` : r.description, brl(BigInt(r.net_cents)), brl(this.balance)]);
    }
  }

  end(): void {
    this.closeDay();
    this.doc.moveDown(0.5).font('Helvetica-Bold').fontSize(10).text(`Saldo final: ${brl(this.balance)}`, 40);
    this.doc.end();
  }
}
