import { describe, expect, test } from '@jest/globals';
import { buildBrCode, crc16, parseBrCode } from '../src/pix/brcode.ts';
import { AppError } from '../src/shared/errors.ts';

/**
 * Real codes, each checked against an independent CRC (Python's binascii.crc_hqx) before use:
 * - BCB_MANUAL: the static example of the Banco Central's Manual de Padrões para Iniciação do Pix (EVP key, no amount),
 *   also reproduced by alesaudate/pix-qrcodegen's README as "página 16 da especificação".
 * - BACEN_ISSUE: a static code with amount R$ 0.15 and a txid, posted to bacen/pix-api issue #236 to test payer PSPs.
 * - PIX_UTILS_STATIC / PIX_UTILS_DYNAMIC: fixtures of thalesog/pix-utils (tests/emvCodes.ts): e-mail key, 26-02 text,
 *   R$ 10.00; and a dynamic code without field 01.
 * - GERENCIANET_DYNAMIC: a charge's code issued by the PSP Gerencianet, from brasycad/api-pipago-sdk-node's README.
 * - GIST_DYNAMIC: the dynamic example ("seção 6.2") of gist matheusb-comp/1efa205b3c0ffd7af1e8ce63a10e02dc.
 * - GIST_STATIC_BAD_LENGTH: the same gist's static example; its field 62 declares 8 characters for a 7-character value
 *   and its CRC was computed over that broken text, so only the TLV reading can catch it.
 */
const BCB_MANUAL =
  '00020126580014br.gov.bcb.pix0136123e4567-e12b-12d1-a456-4266554400005204000053039865802BR5913Fulano de Tal6008BRASILIA62070503***63041D3D';
const BACEN_ISSUE =
  '00020126580014br.gov.bcb.pix01365a5ea8c2-cbb5-4c25-a7be-2a778871fc5f52040000530398654040.155802BR5911Arrumadinho6008Brasilia62260522e433v1524u155f31mDvx0163045B1E';
const PIX_UTILS_STATIC =
  '00020126510014br.gov.bcb.pix0115thalesog@me.com0210Pedido 123520400005303986540510.005802BR5914Thales Ogliari6015SAO MIGUEL DO O62070503***63044367';
const PIX_UTILS_ZERO_AMOUNT =
  '00020126510014br.gov.bcb.pix0115thalesog@me.com0210Pedido 12352040000530398654040.005802BR5914Thales Ogliari6015SAO MIGUEL DO O62070503***63044406';
const PIX_UTILS_DYNAMIC =
  '00020126740014br.gov.bcb.pix2552payload.psp.com/3ec9d2f9-5f03-4e0e-820d-63a81e769e875204000053039865802BR5914Thales Ogliari6015SAO MIGUEL DO O62070503***63040C64';
const GERENCIANET_DYNAMIC =
  '00020101021226880014BR.GOV.BCB.PIX2566qrcodes-pix.gerencianet.com.br/v2/f3589f6cff5640df835e1f4e666c4d305204000053039865802BR5914GERENCIANET SA6010OURO PRETO62070503***63041C74';
const GIST_DYNAMIC =
  '00020101021226770014BR.GOV.BCB.PIX2555pix.example.com/qr/93598be0-1bd0-4997-8318-81776a1d8a995204000053039865802BR5907EMPRESA6009SAO PAULO62070503***6304EEAB';
const GIST_STATIC_BAD_LENGTH =
  '00020126360014BR.GOV.BCB.PIX0114+5511943214321520400005303986540566.665802BR5907EMPRESA6008BRASILIA62080503***6304170E';

const EVP = '123e4567-e12b-12d1-a456-426655440000';

/** Test-side TLV writer, independent of the module's builder, to assemble deliberately broken codes. */
const field = (id: string, value: string) => `${id}${String(value.length).padStart(2, '0')}${value}`;
const signed = (...fields: string[]) => {
  const body = `${fields.join('')}6304`;
  return body + crc16(body);
};
const account = (...fields: string[]) => field('26', fields.join(''));
const FIELDS = {
  format: field('00', '01'),
  account: account(field('00', 'br.gov.bcb.pix'), field('01', EVP)),
  mcc: field('52', '0000'),
  currency: field('53', '986'),
  country: field('58', 'BR'),
  name: field('59', 'FULANO DE TAL'),
  city: field('60', 'BRASILIA'),
  data: field('62', field('05', '***')),
};
/** A valid static code with some fields replaced (`null` drops the field); field order is kept. */
const variant = (changes: Partial<Record<keyof typeof FIELDS, string | null>> = {}, extra: string[] = []) =>
  signed(...Object.entries({ ...FIELDS, ...changes }).flatMap(([, value]) => (value === null ? [] : [value])), ...extra);

function refusal(code: string): AppError {
  try {
    parseBrCode(code);
  } catch (err) {
    return err as AppError;
  }
  throw new Error(`accepted ${code}`);
}

describe('crc16', () => {
  test('is CRC-16/CCITT-FALSE: the standard check value and the manual example', () => {
    expect(crc16('123456789')).toBe('29B1');
    expect(crc16(BCB_MANUAL.slice(0, -4))).toBe('1D3D');
  });
});

describe('parseBrCode on real codes', () => {
  test('the manual example: static, EVP key, no amount, no txid', () => {
    expect(parseBrCode(BCB_MANUAL)).toEqual({
      pixKey: EVP,
      url: null,
      amountCents: null,
      merchantName: 'Fulano de Tal',
      merchantCity: 'BRASILIA',
      txid: null,
      initiationMethod: 'static',
      singleUse: false,
    });
  });

  test('a static code with an amount and a txid', () => {
    expect(parseBrCode(BACEN_ISSUE)).toEqual({
      pixKey: '5a5ea8c2-cbb5-4c25-a7be-2a778871fc5f',
      url: null,
      amountCents: 15n,
      merchantName: 'Arrumadinho',
      merchantCity: 'Brasilia',
      txid: 'e433v1524u155f31mDvx01',
      initiationMethod: 'static',
      singleUse: false,
    });
  });

  test('a static code with an e-mail key and free text for the payer', () => {
    expect(parseBrCode(PIX_UTILS_STATIC)).toMatchObject({ pixKey: 'thalesog@me.com', amountCents: 1000n, additionalInfo: 'Pedido 123', txid: null });
  });

  test('a PSP-issued dynamic code: location URL instead of a key, single use', () => {
    expect(parseBrCode(GERENCIANET_DYNAMIC)).toEqual({
      pixKey: null,
      url: 'qrcodes-pix.gerencianet.com.br/v2/f3589f6cff5640df835e1f4e666c4d30',
      amountCents: null,
      merchantName: 'GERENCIANET SA',
      merchantCity: 'OURO PRETO',
      txid: null,
      initiationMethod: 'dynamic',
      singleUse: true,
    });
    expect(parseBrCode(GIST_DYNAMIC)).toMatchObject({ url: 'pix.example.com/qr/93598be0-1bd0-4997-8318-81776a1d8a99', initiationMethod: 'dynamic', singleUse: true });
  });

  test('a dynamic code without field 01 is still dynamic (the URL decides), just not marked single use', () => {
    expect(parseBrCode(PIX_UTILS_DYNAMIC)).toMatchObject({ pixKey: null, url: 'payload.psp.com/3ec9d2f9-5f03-4e0e-820d-63a81e769e87', initiationMethod: 'dynamic', singleUse: false });
  });

  test('surrounding blanks of a pasted code and a lowercase CRC are accepted', () => {
    expect(parseBrCode(`  ${BCB_MANUAL}\n`).pixKey).toBe(EVP);
    expect(parseBrCode(GIST_DYNAMIC.replace(/EEAB$/, 'eeab')).url).not.toBeNull();
  });

  test('a dynamic code\'s 62-05 is ignored, as the manual says; the txid comes with the payload at the URL', () => {
    const code = signed(FIELDS.format, account(field('00', 'br.gov.bcb.pix'), field('25', 'pix.example.com/v2/cobv/1')), FIELDS.mcc, FIELDS.currency, FIELDS.country, FIELDS.name, FIELDS.city, field('62', field('05', 'ABC123')));
    expect(parseBrCode(code)).toMatchObject({ txid: null, initiationMethod: 'dynamic' });
  });

  test('unknown fields (postal code 61, unreserved templates) are tolerated', () => {
    expect(parseBrCode(variant({}, [field('80', field('00', 'x'))])).pixKey).toBe(EVP);
  });
});

describe('parseBrCode refuses broken codes with a precise 400', () => {
  test.each<[string, string, RegExp]>([
    ['a wrong CRC', BCB_MANUAL.replace(/1D3D$/, '1D3E'), /CRC16 mismatch: expected 1D3D, found 1D3E/],
    ['an altered length (CRC not updated)', BCB_MANUAL.replace('5913Fulano', '5914Fulano'), /CRC16 mismatch: expected [0-9A-F]{4}, found 1D3D/],
    ['an overlong length (CRC recomputed)', variant({ city: '6099BRASILIA' }), /field 60 \(merchant city\) at position 106 declares 99 characters but only 27 remain/],
    ['a shortened length (CRC recomputed)', variant({ name: '5912FULANO DE TAL' }), /malformed field header "L600" at position \d+: id and length are 2 digits each/],
    ['a real code whose field 62 length is wrong', GIST_STATIC_BAD_LENGTH, /declares 41 characters but only 3 remain/],
    ['a truncated code', BCB_MANUAL.slice(0, 113), /field 60 \(merchant city\) at position 106 declares 8 characters but only 3 remain \(truncated code or overlong length\)/],
    ['a code cut inside a field header', BCB_MANUAL.slice(0, 108), /truncated at position 106: "60" is too short for a field id and length/],
    ['a code without its CRC field', BCB_MANUAL.slice(0, -8), /missing mandatory field 63 \(CRC16\)/],
    ['a malformed CRC value', `${variant().slice(0, -4)}XYZW`, /field 63 \(CRC16\) must be 4 hexadecimal digits, found "XYZW"/],
    ['a CRC field that is not last', [FIELDS.format, FIELDS.account, '6304ABCD', FIELDS.mcc, FIELDS.currency, FIELDS.country, FIELDS.name, FIELDS.city, FIELDS.data].join(''), /field 63 \(CRC16\) must be the last field/],
    ['a second CRC field', variant({}, [field('63', 'ABCD')]), /field 63 \(CRC16\) appears twice/],
    ['a non-digit header (CRC recomputed)', signed(FIELDS.format, 'A1B2', FIELDS.account), /malformed field header "A1B2" at position 6/],
    ['an empty field', variant({ mcc: '5200' }), /field 52 \(merchant category code\) at position \d+ has length 00/],
    ['a repeated field', variant({}, [FIELDS.name]), /field 59 \(merchant name\) appears twice/],
    ['missing merchant name (59)', variant({ name: null }), /missing mandatory field 59 \(merchant name\)/],
    ['missing merchant city (60)', variant({ city: null }), /missing mandatory field 60 \(merchant city\)/],
    ['missing merchant account information (26)', variant({ account: null }), /missing mandatory field 26 \(merchant account information\)/],
    ['missing GUI', variant({ account: account(field('01', EVP)) }), /field 26 \(merchant account information\) has no GUI \(field 26-00 = "br.gov.bcb.pix"\)/],
    ['a wrong GUI', variant({ account: account(field('00', 'br.gov.bcb.xyz'), field('01', EVP)) }), /field 26-00 \(GUI\) must be "br.gov.bcb.pix", found "br.gov.bcb.xyz"/],
    ['neither key nor URL', variant({ account: account(field('00', 'br.gov.bcb.pix')) }), /neither a Pix key \(26-01\) nor a location URL \(26-25\)/],
    ['both key and URL', variant({ account: account(field('00', 'br.gov.bcb.pix'), field('01', EVP), field('25', 'pix.example.com/1')) }), /both a Pix key \(26-01\) and a location URL \(26-25\)/],
    ['a URL with its scheme', variant({ account: account(field('00', 'br.gov.bcb.pix'), field('25', 'https://pix.example.com/1')) }), /field 26-25 \(location URL\) must not include a scheme/],
    ['a nested field overrunning its template', variant({ account: field('26', '0014br.gov.bcb.pix0140' + EVP) }), /field 26-01 \(Pix key\) at position \d+ declares 40 characters but only 36 remain within field 26/],
    ['an amount with 3 decimals (CRC recomputed)', variant({ currency: FIELDS.currency + field('54', '10.505') }), /field 54 \(transaction amount\) "10.505" is not a decimal amount with at most 2 decimal places/],
    ['an amount with a comma', variant({ currency: FIELDS.currency + field('54', '10,50') }), /field 54 \(transaction amount\) "10,50" is not a decimal amount/],
    ['a negative amount', variant({ currency: FIELDS.currency + field('54', '-1.00') }), /"-1.00" is not a decimal amount/],
    ['a zero amount (a real pix-utils fixture)', PIX_UTILS_ZERO_AMOUNT, /field 54 \(transaction amount\) must be greater than zero/],
    ['a payload format other than 01', variant({ format: field('00', '02') }), /field 00 \(payload format indicator\) must be "01", found "02"/],
    ['a payload format that is not first', signed(FIELDS.account, FIELDS.format, FIELDS.mcc, FIELDS.currency, FIELDS.country, FIELDS.name, FIELDS.city, FIELDS.data), /field 00 \(payload format indicator\) must be the first field/],
    ['an unknown point of initiation method', variant({ format: FIELDS.format + field('01', '13') }), /field 01 \(point of initiation method\) must be "11" or "12", found "13"/],
    ['a currency other than BRL', variant({ currency: field('53', '840') }), /field 53 \(transaction currency\) must be "986", found "840"/],
    ['a country other than BR', variant({ country: field('58', 'PT') }), /field 58 \(country code\) must be "BR", found "PT"/],
    ['a malformed merchant category code', variant({ mcc: field('52', '00A0') }), /field 52 \(merchant category code\) must be 4 digits/],
    ['missing additional data (62)', variant({ data: null }), /missing mandatory field 62 \(additional data field template\)/],
    ['missing txid field (62-05)', variant({ data: field('62', field('50', 'x')) }), /missing mandatory field 62-05 \(txid\)/],
    ['a static txid with symbols', variant({ data: field('62', field('05', 'PEDIDO-1')) }), /field 62-05 \(txid\) must be "\*\*\*" or 1 to 25 letters and digits, found "PEDIDO-1"/],
    ['a static txid longer than 25', variant({ data: field('62', field('05', 'A'.repeat(26))) }), /field 62-05 \(txid\) must be "\*\*\*" or 1 to 25 letters and digits/],
    ['a blank merchant name', variant({ name: field('59', '   ') }), /field 59 \(merchant name\) is blank/],
    ['an empty text', '  ', /the code is empty/],
    ['text that is not a BR Code', 'https://example.com/pay', /malformed field header "http" at position 0/],
  ])('%s', (_, code, message) => {
    const err = refusal(code);
    expect(err).toBeInstanceOf(AppError);
    expect(err.status).toBe(400);
    expect(err.code).toBe('VALIDATION_ERROR');
    expect(err.message).toMatch(/^Invalid Pix BR Code: /);
    expect(err.message).toMatch(message);
  });
});

describe('buildBrCode', () => {
  test('matches an independently computed code: the manual example with an amount, name uppercased', () => {
    expect(buildBrCode({ pixKey: EVP, amountCents: 12345n, merchantName: 'Fulano de Tal', merchantCity: 'Brasília' })).toBe(
      '00020126580014br.gov.bcb.pix0136123e4567-e12b-12d1-a456-4266554400005204000053039865406123.455802BR5913FULANO DE TAL6008BRASILIA62070503***6304488D',
    );
  });

  test('static with amount and txid round-trips through the parser', () => {
    const code = buildBrCode({ pixKey: 'maria@example.com', amountCents: 1050n, merchantName: 'Maria', merchantCity: 'Recife', txid: 'PEDIDO123' });
    expect(parseBrCode(code)).toEqual({
      pixKey: 'maria@example.com',
      url: null,
      amountCents: 1050n,
      merchantName: 'MARIA',
      merchantCity: 'RECIFE',
      txid: 'PEDIDO123',
      initiationMethod: 'static',
      singleUse: false,
    });
  });

  test('static without amount or txid writes "***" and omits field 54', () => {
    const code = buildBrCode({ pixKey: '+5511987654321', merchantName: 'Joao', merchantCity: 'Natal', amountCents: null, txid: null });
    expect(code).not.toContain('5404');
    expect(code).toContain('62070503***6304');
    expect(parseBrCode(code)).toMatchObject({ pixKey: '+5511987654321', amountCents: null, txid: null });
  });

  test('dynamic: location without scheme, single use, "***" txid, amount kept', () => {
    const code = buildBrCode({ url: 'https://pix.example.com/qr/v2/cob/7d3c2a', amountCents: 1n, merchantName: 'Loja', merchantCity: 'Belem' });
    expect(code.startsWith('000201010212')).toBe(true);
    expect(parseBrCode(code)).toEqual({
      pixKey: null,
      url: 'pix.example.com/qr/v2/cob/7d3c2a',
      amountCents: 1n,
      merchantName: 'LOJA',
      merchantCity: 'BELEM',
      txid: null,
      initiationMethod: 'dynamic',
      singleUse: true,
    });
  });

  test('merchant name and city lose accents and symbols, are uppercased and cut to 25 and 15 characters', () => {
    const code = buildBrCode({ pixKey: EVP, merchantName: '  Padaria São João\tdo Açaí 🥐 e Companhia ', merchantCity: 'São José dos Campos' });
    const parsed = parseBrCode(code);
    expect(parsed.merchantName).toBe('PADARIA SAO JOAO DO ACAI');
    expect(parsed.merchantCity).toBe('SAO JOSE DOS CA');
    expect(code).toMatch(/^[\x20-\x7E]+$/);
  });

  test('the largest amount field 54 can hold', () => {
    expect(parseBrCode(buildBrCode({ pixKey: EVP, amountCents: 999_999_999_999n, merchantName: 'A', merchantCity: 'B' })).amountCents).toBe(999_999_999_999n);
  });

  test.each<[string, () => string, RegExp]>([
    ['a static txid too long (charges use dynamic codes)', () => buildBrCode({ pixKey: EVP, merchantName: 'A', merchantCity: 'B', txid: 'A'.repeat(26) }), /txid of a static code must be 1 to 25 letters and digits/],
    ['a static txid with symbols', () => buildBrCode({ pixKey: EVP, merchantName: 'A', merchantCity: 'B', txid: 'PEDIDO-1' }), /txid of a static code/],
    ['a txid on a dynamic code', () => buildBrCode({ url: 'pix.example.com/1', merchantName: 'A', merchantCity: 'B', txid: 'A'.repeat(30) } as never), /a dynamic code carries no txid/],
    ['a zero amount', () => buildBrCode({ pixKey: EVP, merchantName: 'A', merchantCity: 'B', amountCents: 0n }), /amountCents must be between 1 and 999999999999/],
    ['an amount too large for field 54', () => buildBrCode({ pixKey: EVP, merchantName: 'A', merchantCity: 'B', amountCents: 1_000_000_000_000n }), /amountCents must be between 1/],
    ['a key too long for field 26', () => buildBrCode({ pixKey: `${'a'.repeat(80)}@example.com`, merchantName: 'A', merchantCity: 'B' }), /field 26-01 \(Pix key\) cannot hold|field 26 \(merchant account information\) cannot hold/],
    ['a key with blanks', () => buildBrCode({ pixKey: 'a b@example.com', merchantName: 'A', merchantCity: 'B' }), /pixKey must be a non-empty key without blanks/],
    ['a name with nothing printable', () => buildBrCode({ pixKey: EVP, merchantName: '漢字 🥐', merchantCity: 'B' }), /merchantName has no printable characters/],
    ['an http location', () => buildBrCode({ url: 'http://pix.example.com/1', merchantName: 'A', merchantCity: 'B' }), /url must be an https location/],
  ])('refuses %s', (_, build, message) => {
    expect(build).toThrow(AppError);
    expect(build).toThrow(message);
  });
});
