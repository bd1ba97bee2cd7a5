import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import express, { type Router } from 'express';
import { errorsRaisedBy } from '../http/error-codes.ts';
import { documentOperation, mergeErrors } from '../http/operation-doc.ts';
import { defineRoute, HTTP_LAYER_ERRORS } from '../http/route.ts';
import type { Holder } from '../identity/entities.ts';
import { decideKyc, holderOfRequisition, openKycPage } from '../identity/kyc.ts';
import type { PlatformContext } from '../platform-context.ts';
import { cpfSchema } from '../shared/documents.ts';
import { notFound } from '../shared/errors.ts';
import { freeText, z } from '../shared/zod.ts';

/** Requisition ids are 14-digit numbers; only digits are read (no sign, blank, exponent or fraction). */
const requisitionParams = z.object({ requisitionId: z.string().regex(/^\d{1,15}$/, 'requisitionId is a number of at most 15 digits').transform(Number) });

/**
 * The browser's form cannot send headers, so X-Tenant-Id is optional here; when a caller sends it, the requisition must
 * belong to that tenant, so one tenant's client cannot drive another tenant's onboarding.
 */
const optionalTenantHeaders = z.object({
  'x-tenant-id': z.uuid({ error: 'X-Tenant-Id must be the tenant UUID' }).optional().openapi({ description: 'Tenant UUID; when sent, the requisition must be of this tenant' }),
});

const KycDecision = z
  .object({
    decision: z.enum(['APPROVED', 'REJECTED']).default('APPROVED'),
    reason: freeText().trim().max(200).optional(),
    phone: z
      .string()
      .trim()
      .regex(/^\+[1-9]\d{7,14}$/, 'must be in E.164 format, e.g. +5511912345678')
      .optional()
      .or(z.literal('').transform(() => undefined)),
    partnerName: freeText().trim().min(3).max(200).optional().or(z.literal('').transform(() => undefined)),
    partnerDocument: cpfSchema.optional().or(z.literal('').transform(() => undefined)),
  })
  .openapi('KycDecision');

const KycOutcome = z
  .object({
    status: z.enum(['PENDING', 'ACTIVE', 'BLOCKED', 'CLOSED']),
    onboardingStep: z.enum(['PENDING', 'IN_PROGRESS', 'DONE', 'REJECTED']),
    accountStatus: z.enum(['APPROVED', 'PENDING', 'REJECTED']).nullable().openapi({ description: "The holder's account; null while not decided" }),
  })
  .openapi('KycOutcome');

const escape = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function page(holder: Holder, notice?: string): string {
  const finished = holder.onboardingStep === 'DONE' || holder.onboardingStep === 'REJECTED';
  const companyFields =
    holder.type === 'COMPANY'
      ? `<fieldset><legend>Partner (owner)</legend>
           <label>Name <input name="partnerName" required></label>
           <label>CPF <input name="partnerDocument" pattern="\\d{11}" required></label></fieldset>`
      : '';
  const form = finished
    ? ''
    : `<form method="post" action="/onboarding/${holder.onboardingRequisitionId}/complete">
         <label>Phone (E.164) <input name="phone" placeholder="+5511912345678"></label>
         ${companyFields}
         <button name="decision" value="APPROVED">Approve KYC</button>
         <button name="decision" value="REJECTED" formnovalidate>Reject KYC</button>
       </form>`;
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>KYC sandbox</title>
    <style>body{font-family:system-ui;max-width:36rem;margin:3rem auto}label{display:block;margin:.5rem 0}button{margin:.5rem .5rem 0 0}</style></head>
    <body><h1>Identity verification (sandbox)</h1>
    <p>${escape(holder.name)}: onboarding <strong id="step">${holder.onboardingStep}</strong>, holder <strong id="status">${holder.status}</strong>.</p>
    ${notice ? `<p><em>${escape(notice)}</em></p>` : ''}${form}</body></html>`;
}

/**
 * The KYC provider's page behind `onboardingLink` and its completion endpoint. Both signal the holder's onboarding
 * workflow exactly as a real KYC provider's callback would.
 */
export function registerKycProviderPageRoutes(router: Router, registry: OpenAPIRegistry, platform: PlatformContext): void {
  documentOperation(registry, {
    method: 'get',
    path: '/onboarding/:requisitionId',
    operationId: 'openOnboardingPage',
    tags: ['Sandbox'],
    summary: "Sandbox: the KYC page behind a holder's onboardingLink (HTML, for a browser)",
    description: 'Opening it moves onboardingStep from PENDING to IN_PROGRESS. Its buttons post the form to /onboarding/{requisitionId}/complete.',
    params: requisitionParams,
    security: [[]],
    responses: {
      200: {
        description: 'The page',
        contentType: 'text/html',
        schema: z.string(),
        example: '<!doctype html><html lang="en"><head><title>KYC sandbox</title></head><body><h1>Identity verification (sandbox)</h1>…</body></html>',
      },
    },
    errors: mergeErrors(HTTP_LAYER_ERRORS, errorsRaisedBy([holderOfRequisition])),
  });
  router.get('/onboarding/:requisitionId', async (req, res) => {
    const params = requisitionParams.safeParse(req.params);
    const headers = optionalTenantHeaders.safeParse(req.headers);
    if (!params.success || !headers.success) throw notFound('Onboarding requisition');
    const holder = await holderOfRequisition(platform, params.data.requisitionId, headers.data['x-tenant-id']);
    await openKycPage(platform, holder);
    res.type('html').send(page(holder));
  });

  router.post('/onboarding/:requisitionId/complete', express.urlencoded({ extended: false, limit: '10kb' }));
  defineRoute(router, registry, {
    method: 'post',
    path: '/onboarding/:requisitionId/complete',
    operationId: 'completeOnboarding',
    tags: ['Sandbox'],
    summary: 'Sandbox: complete (or reject) KYC for an onboarding requisition',
    description:
      'Companies must name a partner (partnerName, partnerDocument) to be approved. Answers once the decision is applied. ' +
      'The page posts the same fields as a form (application/x-www-form-urlencoded) and is answered 303 back to the page.',
    headers: optionalTenantHeaders,
    // A browser's form cannot send headers: X-Tenant-Id is optional, and when sent the requisition must be of that tenant.
    security: [[], ['tenantId']],
    params: requisitionParams,
    body: KycDecision,
    bodyExample: { decision: 'APPROVED', phone: '+5511912345678' },
    responses: {
      200: { description: 'Decision applied', schema: KycOutcome, example: { status: 'ACTIVE', onboardingStep: 'DONE', accountStatus: 'APPROVED' } },
      202: { description: 'Decision accepted; the worker has not applied it yet', schema: KycOutcome, example: { status: 'PENDING', onboardingStep: 'IN_PROGRESS', accountStatus: null } },
      303: { description: 'A form post: back to the page', headers: { Location: { description: 'The onboarding page', schema: { type: 'string' } } } },
    },
    raises: [holderOfRequisition, decideKyc],
    async handler({ headers, params, body, req }) {
      const holder = await holderOfRequisition(platform, params.requisitionId, headers['x-tenant-id']);
      const { holder: decided, accountStatus } = await decideKyc(platform, holder, {
        approved: body.decision === 'APPROVED',
        ...(body.reason ? { reason: body.reason } : {}),
        ...(body.phone ? { phone: body.phone } : {}),
        ...(body.partnerName && body.partnerDocument ? { partner: { name: body.partnerName, document: body.partnerDocument } } : {}),
      });
      if (req.is('application/x-www-form-urlencoded')) return { status: 303, body: {}, headers: { location: `/onboarding/${params.requisitionId}` } };
      if (!decided) return { status: 202, body: { status: holder.status, onboardingStep: holder.onboardingStep, accountStatus: null } };
      return { status: 200, body: { status: decided.status, onboardingStep: decided.onboardingStep, accountStatus } };
    },
  });
}
