import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { loadConfig } from '../src/config.ts';
import { guardedLookup, isForbiddenAddress, resolvesToPublic } from '../src/shared/address-guard.ts';
import { receiverPool, send } from '../src/webhooks/sender.ts';
import { closeDb } from './support/db.ts';
import { apiKey, newTenant, onboarded, pixAccountIdOf } from './support/fixtures.ts';
import { http } from './support/http.ts';
import { startPlatform, type Platform } from './support/platform.ts';
import { startReceiver, testCertificate } from './support/receiver.ts';

describe('address guard', () => {
  test.each(['127.0.0.1', '10.1.2.3', '172.16.0.9', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '::1', 'fe80::1', 'fd00::1', '::ffff:127.0.0.1', 'not-an-ip'])(
    '%s is forbidden',
    (address) => expect(isForbiddenAddress(address)).toBe(true),
  );
  test.each(['8.8.8.8', '1.1.1.1', '200.160.2.3', '2001:4860:4860::8888'])('%s is allowed', (address) => expect(isForbiddenAddress(address)).toBe(false));

  test('URLs on loopback or private hosts do not resolve to public addresses', async () => {
    for (const url of ['https://127.0.0.1/x', 'https://localhost/x', 'https://[::1]/x', 'https://10.0.0.5/', 'https://169.254.169.254/latest/meta-data']) {
      expect(await resolvesToPublic(new URL(url))).toBe(false);
    }
    expect(await resolvesToPublic(new URL('https://93.184.216.34/'))).toBe(true);
  });

  test('the delivery socket lookup refuses a host that resolves inward', async () => {
    const error = await new Promise<NodeJS.ErrnoException | null>((resolve) => guardedLookup('localhost', {}, (err) => resolve(err)));
    expect(error?.code).toBe('EFORBIDDENADDRESS');
  });

  test('outside the sandbox, a delivery to a host that resolves inward is refused at connect: nothing reaches it', async () => {
    const receiver = await startReceiver();
    const config = loadConfig({ ...process.env, SANDBOX: '0', WEBHOOK_CA_FILE: testCertificate().certFile });
    const url = receiver.url.replace('127.0.0.1', 'localhost');
    const pool = receiverPool(config, url, 1);
    try {
      const result = await send(config, { url: `${url}/guarded`, authToken: 'a-token-of-sixteen-chars', pool }, { id: randomUUID(), type: 'tev.out.succeeded', data: {} });
      expect(result).toMatchObject({ statusCode: null, error: 'localhost resolves to a forbidden address' });
      expect(receiver.received).toEqual([]);
    } finally {
      await pool.close();
      await receiver.close();
    }
  });
});

describe('sending outside the sandbox', () => {
  test('a delivery to a literal private address is refused when it is sent, not only at registration: nothing reaches it', async () => {
    const receiver = await startReceiver();
    const config = loadConfig({ ...process.env, SANDBOX: '0', WEBHOOK_CA_FILE: testCertificate().certFile });
    const port = new URL(receiver.url).port;
    try {
      for (const host of ['127.0.0.1', '[::ffff:127.0.0.1]']) {
        const url = `https://${host}:${port}`;
        const pool = receiverPool(config, url, 1);
        try {
          const result = await send(config, { url: `${url}/literal`, authToken: 'a-token-of-sixteen-chars', pool }, { id: randomUUID(), type: 'tev.out.succeeded', data: {} });
          expect(result).toMatchObject({ statusCode: null, error: `${new URL(url).hostname} is a forbidden address` });
        } finally {
          await pool.close();
        }
      }
      expect(receiver.received).toEqual([]);
      // The sandbox still delivers to it: its receivers run on the developer's machine.
      const sandbox = loadConfig({ ...process.env, SANDBOX: '1', WEBHOOK_CA_FILE: testCertificate().certFile });
      const pool = receiverPool(sandbox, receiver.url, 1);
      try {
        expect(await send(sandbox, { url: `${receiver.url}/literal`, authToken: 'a-token-of-sixteen-chars', pool }, { id: randomUUID(), type: 'tev.out.succeeded', data: {} })).toMatchObject({ statusCode: 200, error: null });
      } finally {
        await pool.close();
      }
      expect(receiver.received).toHaveLength(1);
    } finally {
      await receiver.close();
    }
  });
});

describe('registration outside the sandbox', () => {
  let sandbox: Platform;
  let production: Platform;
  beforeAll(async () => {
    sandbox = await startPlatform();
    production = await startPlatform({ SANDBOX: '0' });
  }, 90_000);
  afterAll(async () => {
    await Promise.all([sandbox?.stop(), production?.stop()]);
    await closeDb();
  });

  test('refuses URLs whose host is loopback, private or metadata, and serves no sandbox pages', async () => {
    const t = await newTenant(sandbox);
    const h = await onboarded(sandbox, t);
    const pix = await pixAccountIdOf(sandbox, t, h.document);
    const key = await apiKey(sandbox, t, pix);
    for (const url of ['https://127.0.0.1:8443/hook', 'https://localhost/hook', 'https://10.1.2.3/hook', 'https://169.254.169.254/hook']) {
      const res = await http('POST', `${production.apiUrl}/v1/pix-accounts/${pix}/webhooks`, {
        body: { url, events: ['pix.in.received'], authToken: 'x'.repeat(32) },
        headers: { authorization: `Bearer ${key}`, 'idempotency-key': randomUUID() },
      });
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('WEBHOOK_URL_NOT_ALLOWED');
    }
    expect((await http('POST', `${production.holderUrl}/sandbox/pix/incoming`, { body: {} })).status).toBe(404);
    expect((await http('GET', `${production.holderUrl}/onboarding/${h.holder.onboardingRequisitionId}`)).status).toBe(404);
  });
});
