import { freeText, z } from '../shared/zod.ts';
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
    id: z.uuid(),
    email: z.string(),
    emailConfirmation: z.boolean(),
    phone: z.string().nullable(),
    phoneConfirmation: z.boolean(),
    name: z.string(),
    document: z.string(),
    status: z.enum(['PENDING', 'ACTIVE', 'BLOCKED', 'CLOSED']),
    onboardingStep: z.enum(['PENDING', 'IN_PROGRESS', 'DONE', 'REJECTED']),
    onboardingLink: z.string().nullable(),
    onboardingRequisitionId: z.number().nullable(),
    hasPin: z.boolean(),
  })
  .openapi('Holder');

export const AccountSummary = z
  .object({
    id: z.uuid(),
    bank: z.string(),
    agency: z.string(),
    number: z.string(),
    balance: z.number().openapi({ description: 'reais' }),
    status: z.enum(['APPROVED', 'PENDING', 'REJECTED']),
    monthlyGoal: z.number().openapi({ description: 'reais; the most the holder wants to spend this month' }),
    monthlySpending: z.number().openapi({ description: 'reais; debits net of reversals this month (America/Sao_Paulo)' }),
    savingsProgress: z.number().openapi({ description: 'percentage (0-100) of monthlyGoal not yet spent; 0 without a goal' }),
  })
  .openapi('Account');

export const AuthenticationResult = z
  .object({ token: z.string(), entityType: z.enum(['PERSON', 'COMPANY']), entity: HolderEntity, accounts: z.array(AccountSummary) })
  .openapi('AuthenticationResult');

export const digitsDocument = z.string().regex(/^\d{11}$|^\d{14}$/, 'must be 11 (CPF) or 14 (CNPJ) digits, digits only');

export const PasswordLogin = z.object({ document: digitsDocument, password: z.string().min(1).max(128) }).openapi('PasswordLogin');
export const ClientLogin = z
  .object({ document: z.string().regex(/^\d{11,14}$/, 'must be 11 to 14 digits, digits only') })
  .strict()
  .openapi('ClientLogin');

export const CreatePin = z.object({ pin: newPinSchema }).openapi('CreatePin');
export const ChangePin = z.object({ currentPin: pinSchema, newPin: newPinSchema }).openapi('ChangePin');
export const Message = z.object({ message: z.string() }).openapi('Message');
