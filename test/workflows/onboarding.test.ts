import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { kycResultFirst, kycThroughThePage } from './scenarios/onboarding.ts';
import { startHarness, type WorkflowHarness } from './support/harness.ts';

let h: WorkflowHarness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.teardown();
});

test('registration, KYC page opened, approved: account provisioned, onboarding IN_PROGRESS, then APPROVED', async () => {
  const decision = { approved: true, phone: '+5511987654321' };
  const run = await kycThroughThePage(h, decision);
  expect(run.result).toBe('APPROVED');
  expect(run.states).toEqual(['WAITING_FOR_KYC', 'IN_PROGRESS']);
  expect(run.log.list()).toEqual([
    ['provisionAccount', run.holderId],
    ['markOnboardingInProgress', run.holderId],
    ['approveOnboarding', run.holderId, decision],
  ]);
});

test('a rejection that starts the run itself (signal-with-start): REJECTED, without IN_PROGRESS', async () => {
  const run = await kycResultFirst(h, { approved: false, reason: 'Documento ilegível' });
  expect(run.result).toBe('REJECTED');
  expect(run.log.list()).toEqual([
    ['provisionAccount', run.holderId],
    ['rejectOnboarding', run.holderId, 'Documento ilegível'],
  ]);
});

test('a rejection without a reason is recorded as "KYC rejected"; only the first decision counts', async () => {
  const run = await kycResultFirst(h, { approved: false }, { approved: true });
  expect(run.result).toBe('REJECTED');
  expect(run.log.list()).toEqual([
    ['provisionAccount', run.holderId],
    ['rejectOnboarding', run.holderId, 'KYC rejected'],
  ]);
});
