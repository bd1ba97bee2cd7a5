import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { Connection, Client } from '@temporalio/client';
import { closeDb, sql } from './support/db.ts';
import { completeKyc, login, newCpf, newTenant, register, waitFor } from './support/fixtures.ts';
import { http } from './support/http.ts';
import { startPlatform, type Platform } from './support/platform.ts';

let platform: Platform;
let tenantId: string;
let connection: Connection;
let client: Client;
beforeAll(async () => {
  platform = await startPlatform();
  tenantId = await newTenant(platform);
  connection = await Connection.connect({ address: process.env.TEST_TEMPORAL_ADDRESS! });
  client = new Client({ connection });
});
afterAll(async () => {
  await platform?.stop();
  await connection?.close();
  await closeDb();
});

const accountOf = async (holderId: string) => (await sql('select * from account where holder_id = $1', [holderId]))[0];

describe('KYC onboarding workflow', () => {
  test('registration provisions a PENDING account; the page moves to IN_PROGRESS; approval activates holder and account', async () => {
    const r = await register(platform, tenantId);
    const pending = await waitFor(() => accountOf(r.holder.id), 20_000, 'account provisioning');
    expect(pending).toMatchObject({ status: 'PENDING', bank: '000', kind: 'HOLDER' });

    const pageRes = await fetch(r.holder.onboardingLink);
    expect(pageRes.status).toBe(200);
    expect(await pageRes.text()).toContain('Approve KYC');
    await waitFor(async () => (await sql('select onboarding_step from holder where id = $1', [r.holder.id]))[0].onboarding_step === 'IN_PROGRESS', 20_000, 'IN_PROGRESS');

    const before = await login(platform, r);
    expect(before.body.entity).toMatchObject({ status: 'PENDING', onboardingStep: 'IN_PROGRESS', onboardingLink: r.holder.onboardingLink });
    expect(before.body.accounts).toEqual([expect.objectContaining({ status: 'PENDING' })]);

    const done = await completeKyc(platform, r.holder, { phone: '+5511912345678' });
    expect(done.status).toBe(200);
    expect(done.body).toEqual({ status: 'ACTIVE', onboardingStep: 'DONE', accountStatus: 'APPROVED' });

    const after = await login(platform, r);
    expect(after.status).toBe(200);
    expect(after.body.entity).toMatchObject({ status: 'ACTIVE', onboardingStep: 'DONE', onboardingLink: null, phone: '+5511912345678', phoneConfirmation: true });
    expect(after.body.accounts).toEqual([
      {
        id: pending.id,
        pixAccountId: expect.stringMatching(/^[a-z][0-9a-z]{23}$/),
        bank: '000',
        agency: expect.stringMatching(/^\d{4}$/),
        number: expect.stringMatching(/^\d+$/),
        balance: 0,
        status: 'APPROVED',
        monthlyGoal: 0,
        monthlySpending: 0,
        savingsProgress: 0,
      },
    ]);
    const account = await accountOf(r.holder.id);
    expect(account.pix_account_id).toMatch(/^[a-z0-9]{24,}$/);
    // The integrator's id of the account is in the authentication response, not only in the operator command line.
    expect(after.body.accounts[0].pixAccountId).toBe(account.pix_account_id);
    expect(account.core_account_id).toMatch(/^[a-z0-9]{24,}$/);

    // Operators find the run by business ids, never by personal data.
    const runs = [];
    for await (const w of client.workflow.list({ query: `HolderId = "${r.holder.id}" AND TenantId = "${tenantId}"` })) runs.push(w);
    expect(runs.map((w) => [w.workflowId, w.status.name])).toEqual([[`onboarding-${r.holder.id}`, 'COMPLETED']]);
    expect(JSON.stringify(runs[0]!.searchAttributes)).not.toContain(r.document);

    const again = await completeKyc(platform, r.holder);
    expect(again.status).toBe(409);
    expect(again.body.code).toBe('ONBOARDING_FINISHED');
  });

  test('a rejected KYC blocks the holder and rejects the account', async () => {
    const r = await register(platform, tenantId);
    const res = await completeKyc(platform, r.holder, { decision: 'REJECTED', reason: 'document photo unreadable' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'BLOCKED', onboardingStep: 'REJECTED', accountStatus: 'REJECTED' });
    const auth = await login(platform, r);
    expect(auth.status).toBe(401);
    expect(auth.body).toEqual({ code: 'HOLDER_BLOCKED', message: 'Conta bloqueada. Procure o suporte.' });
  });

  test('a company is approved only with its partner data', async () => {
    const r = await register(platform, tenantId, 'COMPANY');
    const missing = await completeKyc(platform, r.holder);
    expect(missing.status).toBe(400);
    expect(missing.body.details.map((d: any) => d.path)).toEqual(['body.partnerName', 'body.partnerDocument']);
    const badPartner = await completeKyc(platform, r.holder, { partnerName: 'Sócia', partnerDocument: '12345678900' });
    expect(badPartner.status).toBe(400);
    const ok = await completeKyc(platform, r.holder, { partnerName: 'Ana Sócia', partnerDocument: newCpf() });
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual({ status: 'ACTIVE', onboardingStep: 'DONE', accountStatus: 'APPROVED' });
    const [row] = await sql('select kyc from holder where id = $1', [r.holder.id]);
    expect(row.kyc.partner.name).toBe('Ana Sócia');
  });

  test('the HTML form posts and redirects back to the page', async () => {
    const r = await register(platform, tenantId);
    const res = await fetch(`${platform.holderUrl}/onboarding/${r.holder.onboardingRequisitionId}/complete`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'text/html,*/*;q=0.8' },
      body: 'decision=APPROVED&phone=',
      redirect: 'manual',
    });
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe(`/onboarding/${r.holder.onboardingRequisitionId}`);
    const page = await (await fetch(`${platform.holderUrl}${res.headers.get('location')}`)).text();
    expect(page).toContain('<strong id="step">DONE</strong>');
  });

  test('an unknown requisition is 404 and a bad decision 400', async () => {
    expect((await http('GET', `${platform.holderUrl}/onboarding/123`)).status).toBe(404);
    expect((await http('GET', `${platform.holderUrl}/onboarding/abc`)).status).toBe(404);
    expect((await completeKyc(platform, { onboardingRequisitionId: 123 })).status).toBe(404);
    const r = await register(platform, tenantId);
    const res = await completeKyc(platform, r.holder, { decision: 'MAYBE' });
    expect(res.status).toBe(400);
    expect((await sql('select onboarding_step from holder where id = $1', [r.holder.id]))[0].onboarding_step).toBe('PENDING');
  });

  test('a worker restart while the workflow waits for KYC loses nothing', async () => {
    const r = await register(platform, tenantId);
    await waitFor(() => accountOf(r.holder.id), 20_000, 'account provisioning');
    await platform.stopWorker();
    // The decision is recorded durably by Temporal while no worker runs.
    const accepted = await completeKyc(platform, r.holder);
    expect(accepted.status).toBe(202);
    expect((await accountOf(r.holder.id)).status).toBe('PENDING');
    await platform.startWorker();
    await waitFor(async () => (await accountOf(r.holder.id)).status === 'APPROVED', 30_000, 'approval after restart');
    const auth = await login(platform, r);
    expect(auth.body.entity).toMatchObject({ status: 'ACTIVE', onboardingStep: 'DONE' });
  }, 90_000);
});
