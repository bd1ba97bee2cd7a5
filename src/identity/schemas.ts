import { freeText, z } from '../shared/zod.ts';
import { accountNumber, branch, cuid, documentNumber, uuid } from '../http/common-schemas.ts';
import { cnpjSchema, cpfSchema } from '../shared/documents.ts';
import { newPinSchema, pinSchema } from './pin.ts';

export const PASSWORD_POLICY = 'at least 8 and at most 128 characters, with at least one letter and one digit';

const password = z
  .string()
  .min(8, `password: ${PASSWORD_POLICY}`)
  .max(128, `password: ${PASSWORD_POLICY}`)
  .refine((p) => /\p{L}/u.test(p) && /\d/.test(p), `password: ${PASSWORD_POLICY}`);

const registration = {
  name: freeText().trim().min(3, 'must have at least 3 characters').max(200),
  email: z
    .string()
    .trim()
    .max(254)
    .pipe(z.email('must be a valid e-mail address'))
    .transform((e) => e.toLowerCase()),
  password,
};

export const PersonRegistration = z.object({ ...registration, document: cpfSchema }).openapi('PersonRegistration');
export const CompanyRegistration = z.object({ ...registration, document: cnpjSchema }).openapi('CompanyRegistration');

export const HolderEntity = z
  .object({
    id: uuid(),
    email: z.email().openapi({ example: 'maria@example.com' }),
    emailConfirmation: z.boolean(),
    phone: z
      .string()
      .regex(/^\+[1-9]\d{7,14}$/)
      .nullable()
      .openapi({ description: 'E.164; null until KYC sets it', example: '+5511912345678' }),
    phoneConfirmation: z.boolean(),
    name: z.string().openapi({ example: 'Maria da Silva' }),
    document: documentNumber(),
    status: z.enum(['PENDING', 'ACTIVE', 'BLOCKED', 'CLOSED']),
    onboardingStep: z.enum(['PENDING', 'IN_PROGRESS', 'DONE', 'REJECTED']),
    onboardingLink: z.url().nullable().openapi({ description: 'Where the holder finishes KYC; null once done', example: 'http://127.0.0.1:3000/onboarding/48213950716342' }),
    onboardingRequisitionId: z.number().int().nullable().openapi({ example: 48213950716342 }),
    hasPin: z.boolean(),
  })
  .openapi('Holder');

export const holderExample = {
  id: '3f2b8c1e-5d4a-4f7e-9b6c-2a1d0e9f8c7b',
  email: 'maria@example.com',
  emailConfirmation: false,
  phone: null,
  phoneConfirmation: false,
  name: 'Maria da Silva',
  document: '52998224725',
  status: 'PENDING' as const,
  onboardingStep: 'PENDING' as const,
  onboardingLink: 'http://127.0.0.1:3000/onboarding/48213950716342',
  onboardingRequisitionId: 48213950716342,
  hasPin: false,
};

export const AccountSummary = z
  .object({
    id: uuid('8c5e2f1a-7b3d-4c9e-a2f6-1d0b9e8c7a65'),
    pixAccountId: cuid('pk4m9q2x7v1c8n3b6z0w5r2t').openapi({
      description: 'The account in the integration API: the `accountId` of `/v1/pix-accounts/{accountId}/…` and what API keys are scoped to',
    }),
    bank: z.string().regex(/^\d{3}$/).openapi({ description: '`000` for internal transfers', example: '000' }),
    agency: branch(),
    number: accountNumber(),
    balance: z.number().openapi({ description: 'reais', example: 100 }),
    status: z.enum(['APPROVED', 'PENDING', 'REJECTED']),
    monthlyGoal: z.number().openapi({ description: 'reais; the most the holder wants to spend this month', example: 1500 }),
    monthlySpending: z.number().openapi({ description: 'reais; debits net of reversals this month (America/Sao_Paulo)', example: 250.5 }),
    savingsProgress: z.number().openapi({ description: 'percentage (0-100) of monthlyGoal not yet spent; 0 without a goal', example: 83.3 }),
  })
  .openapi('Account');

export const accountExample = {
  id: '8c5e2f1a-7b3d-4c9e-a2f6-1d0b9e8c7a65',
  pixAccountId: 'pk4m9q2x7v1c8n3b6z0w5r2t',
  bank: '000',
  agency: '0001',
  number: '1000023',
  balance: 100,
  status: 'APPROVED' as const,
  monthlyGoal: 1500,
  monthlySpending: 250.5,
  savingsProgress: 83.3,
};

const jwt = z
  .string()
  .regex(/^[\w-]+\.[\w-]+\.[\w-]+$/)
  .openapi({ description: 'JWT (HS256): send as `Authorization: Bearer <token>`', example: 'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIzZjJiIn0.c2lnbmF0dXJl' });

export const AuthenticationResult = z
  .object({ token: jwt, entityType: z.enum(['PERSON', 'COMPANY']), entity: HolderEntity, accounts: z.array(AccountSummary) })
  .openapi('AuthenticationResult');

export const authenticationExample = {
  token: 'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIzZjJiIn0.c2lnbmF0dXJl',
  entityType: 'PERSON' as const,
  entity: { ...holderExample, status: 'ACTIVE' as const, onboardingStep: 'DONE' as const, onboardingLink: null, phone: '+5511912345678', hasPin: true },
  accounts: [accountExample],
};

export const registrationResult = (key: 'person' | 'company') => z.object({ [key]: HolderEntity, token: jwt });

export const digitsDocument = z.string().regex(/^\d{11}$|^\d{14}$/, 'must be 11 (CPF) or 14 (CNPJ) digits, digits only');

export const PasswordLogin = z.object({ document: digitsDocument, password: z.string().min(1).max(128) }).openapi('PasswordLogin');
export const ClientLogin = z
  .object({ document: z.string().regex(/^\d{11,14}$/, 'must be 11 to 14 digits, digits only') })
  .strict()
  .openapi('ClientLogin');

export const CreatePin = z.object({ pin: newPinSchema }).openapi('CreatePin');
export const ChangePin = z.object({ currentPin: pinSchema, newPin: newPinSchema }).openapi('ChangePin');
export const Message = z.object({ message: z.string().openapi({ example: 'PIN criado com sucesso.' }) }).openapi('Message');
