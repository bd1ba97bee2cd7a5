import { finished } from 'node:stream/promises';
import type { Writable } from 'node:stream';
import PDFDocument from 'pdfkit';
import { brazilianDateTime, brl, formattedDocument } from '../shared/brazilian-format.ts';
import type { TenantBrand } from '../tenants/store.ts';
import type { Receipt, ReceiptKind, ReceiptParty } from './service.ts';

const TITLES: Record<ReceiptKind, string> = {
  PIX_SENT: 'Comprovante de Pix enviado',
  PIX_STATIC_QR_SENT: 'Comprovante de pagamento Pix (QR Code estático)',
  PIX_DYNAMIC_QR_SENT: 'Comprovante de pagamento Pix (QR Code dinâmico)',
  TEV_SENT: 'Comprovante de transferência enviada',
  TEV_RECEIVED: 'Comprovante de transferência recebida',
  PIX_RECEIVED: 'Comprovante de Pix recebido',
  PIX_CHARGE_RECEIVED: 'Comprovante de cobrança Pix recebida',
};

const INK = '#1f2933';
const MUTED = '#6b7785';
const ACCENT = '#0b5cad';
const LEFT = 50;
const WIDTH = 495;

/**
 * The receipt as a bank prints it: the tenant's brand (logo and name) on top, the kind and amount, when, who paid and
 * who received, and the authentication code with where to verify it. Written to `out` as pdfkit produces it.
 */
export async function writeReceiptPdf(receipt: Receipt, brand: TenantBrand, out: Writable): Promise<void> {
  const doc = new PDFDocument({ size: 'A4', margin: 50, info: { Title: TITLES[receipt.kind], Author: brand.name, Subject: receipt.authenticationCode } });
  doc.pipe(out);

  doc.rect(0, 0, doc.page.width, 90).fill(ACCENT);
  let nameX = LEFT;
  if (brand.logo) {
    doc.image(brand.logo, LEFT, 20, { fit: [120, 50] });
    nameX = LEFT + 135;
  }
  doc.fillColor('#ffffff').font('Helvetica-Bold').fontSize(20).text(brand.name, nameX, 33, { width: WIDTH - (nameX - LEFT) });

  doc.fillColor(INK).font('Helvetica-Bold').fontSize(16).text(TITLES[receipt.kind], LEFT, 115, { width: WIDTH });
  if (receipt.status === 'RETURNED') {
    doc.moveDown(0.4).fillColor('#b42318').font('Helvetica-Bold').fontSize(12).text(`DEVOLVIDO: ${brl(receipt.returnedAmount ?? 0)} retornaram ao pagador`, { width: WIDTH });
  }
  doc.moveDown(0.8).fillColor(MUTED).font('Helvetica').fontSize(10).text('Valor');
  doc.fillColor(INK).font('Helvetica-Bold').fontSize(26).text(brl(receipt.amount));
  doc.moveDown(0.3).fillColor(MUTED).font('Helvetica').fontSize(10).text(`${brazilianDateTime(receipt.dateTime)} (horário de Brasília)`);

  section(doc, 'Pagador', receipt.payer);
  section(doc, 'Recebedor', receipt.receiver);

  rule(doc);
  row(doc, 'Descrição', receipt.description);
  row(doc, 'Tarifa', brl(receipt.fee));
  if (receipt.endToEndId) row(doc, 'ID fim a fim', receipt.endToEndId);
  row(doc, 'ID da transação', receipt.transactionId);
  if (receipt.payoutId) row(doc, 'ID do pagamento', receipt.payoutId);

  rule(doc);
  doc.fillColor(MUTED).font('Helvetica').fontSize(10).text('Autenticação', LEFT);
  doc.fillColor(INK).font('Courier-Bold').fontSize(16).text(receipt.authenticationCode, LEFT);
  doc
    .moveDown(0.3)
    .fillColor(MUTED)
    .font('Helvetica')
    .fontSize(8)
    .text(`Confira a autenticidade deste comprovante em GET /receipts/${receipt.authenticationCode}, na API de ${brand.name}.`, LEFT, undefined, { width: WIDTH });

  doc.end();
  await finished(out);
}

function rule(doc: PDFKit.PDFDocument): void {
  doc.moveDown(0.8);
  doc.moveTo(LEFT, doc.y).lineTo(LEFT + WIDTH, doc.y).lineWidth(0.5).strokeColor('#d0d7de').stroke();
  doc.moveDown(0.6);
}

function row(doc: PDFKit.PDFDocument, label: string, value: string): void {
  const y = doc.y;
  doc.fillColor(MUTED).font('Helvetica').fontSize(10).text(label, LEFT, y, { width: 150 });
  doc.fillColor(INK).font('Helvetica').fontSize(10).text(value, LEFT + 160, y, { width: WIDTH - 160 });
  doc.x = LEFT;
  doc.moveDown(0.3);
}

function section(doc: PDFKit.PDFDocument, title: string, p: ReceiptParty): void {
  rule(doc);
  doc.fillColor(ACCENT).font('Helvetica-Bold').fontSize(12).text(title, LEFT);
  doc.moveDown(0.3);
  row(doc, 'Nome', p.name ?? '-');
  row(doc, 'CPF/CNPJ', p.document === null ? '-' : formattedDocument(p.document));
  row(doc, 'Instituição', [p.institution, p.ispb ? `ISPB ${p.ispb}` : null].filter(Boolean).join(' - ') || '-');
  row(doc, 'Agência', p.branch ?? '-');
  row(doc, 'Conta', p.account ?? '-');
}
