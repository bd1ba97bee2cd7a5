import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { chargeExpires, chargePaidEarly, refundSent } from './scenarios/pix-charge.ts';
import { startHarness, type WorkflowHarness } from './support/harness.ts';

let h: WorkflowHarness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.teardown();
});

test('an unpaid charge expires at `expiresAt`, through the activity, once', async () => {
  const run = await chargeExpires(h);
  expect(run.result).toBe('EXPIRED');
  expect(run.log.list()).toEqual([['expirePixCharge', run.chargeId]]);
  expect(run.log.calls[0]!.at).toBeGreaterThanOrEqual(Date.parse(run.expiresAt) - 100);
});

test('the `chargePaid` signal ends the run at once: PAID, no expiry', async () => {
  const run = await chargePaidEarly(h);
  expect(run.result).toBe('PAID');
  expect(run.log.calls).toEqual([]);
  expect(run.endedAt).toBeLessThan(Date.parse(run.expiresAt) - 3_500_000);
});

test("a refund's devolução is sent through the provider, retried until the provider takes it", async () => {
  const run = await refundSent(h);
  expect(run.result).toBe('SENT');
  expect(run.log.list()).toEqual([
    ['sendPixChargeRefund', run.refundId],
    ['sendPixChargeRefund', run.refundId],
  ]);
});
