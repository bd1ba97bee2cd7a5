import { validationError } from '../shared/errors.ts';
import { reaisToCents } from '../shared/money.ts';

/**
 * Pix BR Code ("Pix Copia e Cola"): the EMV QRCPS-MPM payload profiled by the Banco Central's Manual de Padrões para
 * Iniciação do Pix. The text is a sequence of TLV fields (2-digit id, 2-digit length, value); fields 26 (merchant account
 * information) and 62 (additional data) are templates holding TLV fields of their own; field 63 is the CRC16 of
 * everything before its value, itself included ("6304").
 */

/** Globally unique identifier of the Pix arrangement inside field 26; compared case-insensitively. */
export const PIX_GUI = 'br.gov.bcb.pix';

export interface BrCode {
  /** 26-01; null in a dynamic code, whose key is behind the location URL. */
  pixKey: string | null;
  /** 26-25, without scheme (the payer's app fetches `https://` + url); null in a static code. */
  url: string | null;
  /** 54; null when the payer chooses the amount. */
  amountCents: bigint | null;
  merchantName: string;
  merchantCity: string;
  /** 62-05 of a static code; null for "***" and for dynamic codes, whose txid is served at the location URL. */
  txid: string | null;
  initiationMethod: 'static' | 'dynamic';
  /** 01 = "12": the code must not be paid more than once. */
  singleUse: boolean;
  /** 26-02, free text for the payer. */
  additionalInfo?: string;
}

const NAMES: Record<string, string> = {
  '00': 'payload format indicator',
  '01': 'point of initiation method',
  '26': 'merchant account information',
  '26-00': 'GUI',
  '26-01': 'Pix key',
  '26-02': 'additional information',
  '26-25': 'location URL',
  '52': 'merchant category code',
  '53': 'transaction currency',
  '54': 'transaction amount',
  '58': 'country code',
  '59': 'merchant name',
  '60': 'merchant city',
  '62': 'additional data field template',
  '62-05': 'txid',
  '63': 'CRC16',
};

const label = (id: string): string => (NAMES[id] ? `field ${id} (${NAMES[id]})` : `field ${id}`);
function fail(problem: string): never {
  throw validationError(`Invalid Pix BR Code: ${problem}`);
}

/** CRC-16/CCITT-FALSE (polynomial 0x1021, initial 0xFFFF, no reflection) over the UTF-8 bytes; 4 uppercase hex digits. */
export function crc16(text: string): string {
  let crc = 0xffff;
  for (const byte of Buffer.from(text, 'utf8')) {
    crc ^= byte << 8;
    for (let bit = 0; bit < 8; bit++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc.toString(16).toUpperCase().padStart(4, '0');
}

interface Field {
  value: string;
  /** Position of the value in the whole code, for nested reads and error messages. */
  at: number;
}

/**
 * Splits `text` into its TLV fields, refusing anything that is not exactly a run of well-formed fields. `template` names
 * the enclosing field for nested reads; `offset` keeps reported positions relative to the whole code.
 */
function readFields(text: string, template: string | null, offset: number): Map<string, Field> {
  const fields = new Map<string, Field>();
  const within = template ? ` within ${label(template)}` : '';
  for (let pos = 0; pos < text.length; ) {
    const at = offset + pos;
    const header = text.slice(pos, pos + 4);
    if (header.length < 4) fail(`truncated at position ${at}${within}: "${header}" is too short for a field id and length`);
    if (!/^\d{4}$/.test(header)) fail(`malformed field header "${header}" at position ${at}${within}: id and length are 2 digits each`);
    const id = template ? `${template}-${header.slice(0, 2)}` : header.slice(0, 2);
    const length = Number(header.slice(2));
    if (length === 0) fail(`${label(id)} at position ${at} has length 00; empty fields are not allowed`);
    const value = text.slice(pos + 4, pos + 4 + length);
    if (value.length < length) {
      fail(`${label(id)} at position ${at} declares ${length} characters but only ${value.length} remain${within} (truncated code or overlong length)`);
    }
    if (fields.has(header.slice(0, 2))) fail(`${label(id)} appears twice`);
    fields.set(header.slice(0, 2), { value, at: at + 4 });
    pos += 4 + length;
  }
  return fields;
}

function required(fields: Map<string, Field>, id: string, name = id): Field {
  const field = fields.get(id);
  if (field === undefined) fail(`missing mandatory ${label(name)}`);
  return field;
}

function expectValue(fields: Map<string, Field>, id: string, expected: string): void {
  const { value } = required(fields, id);
  if (value !== expected) fail(`${label(id)} must be "${expected}", found "${value}"`);
}

function parseAmount(value: string): bigint {
  if (value.length > 13 || !/^\d+(?:\.\d{1,2})?$/.test(value)) {
    fail(`${label('54')} "${value}" is not a decimal amount with at most 2 decimal places and 13 characters, e.g. "10.50"`);
  }
  const cents = reaisToCents(value)!;
  if (cents === 0n) fail(`${label('54')} must be greater than zero; a code without an amount omits field 54`);
  return cents;
}

/** Parses and checks a BR Code; throws a 400 VALIDATION_ERROR naming the first problem found. */
export function parseBrCode(text: string): BrCode {
  // A pasted code often carries a trailing newline; inner blanks are significant (merchant name) and stay.
  const code = text.trim();
  if (code === '') fail('the code is empty');

  // The CRC goes first when the code ends like one: a mismatch means the text was altered, so nothing inside it can be
  // trusted or usefully reported. A code that does not end like one is read field by field to say where it breaks.
  const tail = /6304([0-9A-Fa-f]{4})$/.exec(code);
  if (tail) {
    const expected = crc16(code.slice(0, -4));
    if (expected !== tail[1]!.toUpperCase()) fail(`CRC16 mismatch: expected ${expected}, found ${tail[1]}`);
  }

  const fields = readFields(code, null, 0);
  const ids = [...fields.keys()];
  if (ids[0] !== '00') fail(fields.has('00') ? `${label('00')} must be the first field` : `missing mandatory ${label('00')}`);
  const crc = required(fields, '63').value;
  if (ids.at(-1) !== '63') fail(`${label('63')} must be the last field`);
  if (!tail) fail(`${label('63')} must be 4 hexadecimal digits, found "${crc}"`);

  expectValue(fields, '00', '01');
  const method = fields.get('01')?.value;
  if (method !== undefined && method !== '11' && method !== '12') fail(`${label('01')} must be "11" or "12", found "${method}"`);

  const accountField = required(fields, '26');
  const account = readFields(accountField.value, '26', accountField.at);
  const gui = account.get('00')?.value;
  if (gui === undefined) fail(`${label('26')} has no GUI (field 26-00 = "${PIX_GUI}")`);
  if (gui.toLowerCase() !== PIX_GUI) fail(`${label('26-00')} must be "${PIX_GUI}", found "${gui}"`);
  const pixKey = account.get('01')?.value ?? null;
  const url = account.get('25')?.value ?? null;
  if (pixKey !== null && url !== null) fail(`${label('26')} carries both a Pix key (26-01) and a location URL (26-25); a code has one or the other`);
  if (pixKey === null && url === null) fail(`${label('26')} has neither a Pix key (26-01) nor a location URL (26-25)`);
  if (url !== null && /^[a-z][a-z0-9+.-]*:\/\//i.test(url)) fail(`${label('26-25')} must not include a scheme; the payer's app prefixes https://`);

  const mcc = required(fields, '52').value;
  if (!/^\d{4}$/.test(mcc)) fail(`${label('52')} must be 4 digits, found "${mcc}"`);
  expectValue(fields, '53', '986');
  const amount = fields.get('54')?.value;
  const amountCents = amount === undefined ? null : parseAmount(amount);
  expectValue(fields, '58', 'BR');
  const merchantName = required(fields, '59').value;
  const merchantCity = required(fields, '60').value;
  // Lengths of 59 (25) and 60 (15) are not enforced: real generators exceed them, and they are only shown to the payer.
  if (merchantName.trim() === '') fail(`${label('59')} is blank`);
  if (merchantCity.trim() === '') fail(`${label('60')} is blank`);

  const dataField = required(fields, '62');
  const reference = required(readFields(dataField.value, '62', dataField.at), '05', '62-05').value;
  // Dynamic codes carry "***" in 62-05 and payers ignore whatever is there: the charge's txid comes with the payload
  // fetched from the URL. Only a static code's 62-05 is its txid (at most 25 characters, unlike a charge's 26 to 35).
  let txid: string | null = null;
  if (url === null && reference !== '***') {
    if (!/^[A-Za-z0-9]{1,25}$/.test(reference)) fail(`${label('62-05')} must be "***" or 1 to 25 letters and digits, found "${reference}"`);
    txid = reference;
  }

  const info = account.get('02')?.value;
  return {
    pixKey,
    url,
    amountCents,
    merchantName,
    merchantCity,
    txid,
    initiationMethod: url === null ? 'static' : 'dynamic',
    singleUse: method === '12',
    ...(info === undefined ? {} : { additionalInfo: info }),
  };
}

/**
 * What a payment of a static code sends: the code's amount (field 54), which the payer may repeat but not change, or,
 * when the code has none, the payer's, which is then required. Refusals are 400 naming `body.amount`.
 */
export function amountToPay(code: BrCode, requested: bigint | undefined): bigint {
  if (code.amountCents !== null && requested !== undefined && requested !== code.amountCents) {
    throw validationError('The code fixes the amount', [{ path: 'body.amount', message: `must be omitted or equal ${code.amountCents} cents` }]);
  }
  const amount = code.amountCents ?? requested;
  if (amount === undefined) throw validationError('The code has no amount', [{ path: 'body.amount', message: 'required: the code has no amount' }]);
  return amount;
}

interface BuildCommon {
  merchantName: string;
  merchantCity: string;
  /** Omitted or null: the payer chooses the amount. */
  amountCents?: bigint | null;
}

/** A static code names the key (and may carry a txid of up to 25 letters and digits); a dynamic one a location URL. */
export type BuildBrCodeInput =
  | (BuildCommon & { pixKey: string; url?: undefined; txid?: string | null })
  | (BuildCommon & { url: string; pixKey?: undefined; txid?: undefined });

/** Largest amount field 54 can hold: 13 characters, "9999999999.99". */
const MAX_CODE_AMOUNT_CENTS = 999_999_999_999n;

function tlv(id: string, value: string, name = id): string {
  if (value.length === 0 || value.length > 99) throw validationError(`${label(name)} cannot hold ${value.length} characters (1 to 99)`);
  return `${id}${String(value.length).padStart(2, '0')}${value}`;
}

/** Merchant name and city as the payer's app expects them: printable ASCII (accents stripped), uppercase, cut to `max`. */
function displayText(text: string, max: number, what: string): string {
  const ascii = text
    .normalize('NFD')
    .replace(/\p{M}/gu, '')
    .replace(/\s+/g, ' ')
    .replace(/[^\x20-\x7E]/g, '')
    .replace(/ {2,}/g, ' ')
    .trim()
    .toUpperCase();
  const cut = ascii.slice(0, max).trimEnd();
  if (cut === '') throw validationError(`${what} has no printable characters left once accents and symbols are removed`);
  return cut;
}

/** Reais as BR Codes (field 54) and charge payloads (`valor.original`) write them: "1234.50". */
export const reaisText = (cents: bigint): string => `${cents / 100n}.${String(cents % 100n).padStart(2, '0')}`;

function formatAmount(cents: bigint): string {
  if (cents <= 0n || cents > MAX_CODE_AMOUNT_CENTS) throw validationError(`amountCents must be between 1 and ${MAX_CODE_AMOUNT_CENTS}`);
  return reaisText(cents);
}

function locationOf(url: string): string {
  // The manual stores the location without scheme; the payer's app always fetches it over https.
  const location = url.trim().replace(/^https:\/\//i, '');
  if (location === '' || /\s/.test(location) || /^[a-z][a-z0-9+.-]*:\/\//i.test(location)) {
    throw validationError('url must be an https location, e.g. pix.example.com/qr/v2/9d36b84f');
  }
  return location;
}

function staticTxid(txid: string | null | undefined): string {
  if (txid === undefined || txid === null || txid === '***') return '***';
  if (!/^[A-Za-z0-9]{1,25}$/.test(txid)) {
    throw validationError('txid of a static code must be 1 to 25 letters and digits; a charge (26 to 35 characters) uses a dynamic code');
  }
  return txid;
}

/** Builds a BR Code: static when given `pixKey`, dynamic (single use, "010212") when given the charge's location `url`. */
export function buildBrCode(input: BuildBrCodeInput): string {
  const dynamic = input.url !== undefined;
  if (dynamic && input.txid != null) {
    throw validationError('a dynamic code carries no txid (field 62-05 is "***"); the charge\'s txid is served at its location URL');
  }
  let account: string;
  if (dynamic) {
    account = tlv('00', PIX_GUI) + tlv('25', locationOf(input.url), '26-25');
  } else {
    const key = input.pixKey.trim();
    if (key === '' || /\s/.test(key)) throw validationError('pixKey must be a non-empty key without blanks');
    account = tlv('00', PIX_GUI) + tlv('01', key, '26-01');
  }
  const amountCents = input.amountCents ?? null;
  const payload = [
    tlv('00', '01'),
    dynamic ? tlv('01', '12') : '',
    tlv('26', account),
    tlv('52', '0000'),
    tlv('53', '986'),
    amountCents === null ? '' : tlv('54', formatAmount(amountCents)),
    tlv('58', 'BR'),
    tlv('59', displayText(input.merchantName, 25, 'merchantName')),
    tlv('60', displayText(input.merchantCity, 15, 'merchantCity')),
    tlv('62', tlv('05', dynamic ? '***' : staticTxid(input.txid), '62-05')),
    '6304',
  ].join('');
  return payload + crc16(payload);
}
