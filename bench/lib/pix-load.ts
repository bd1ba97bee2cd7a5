/**
 * Pix payers and a load of payments by key (R$ 0.01 to random EVP keys), shared by `bench/profile/pix-load.ts` and
 * the A/B driver. The driver measures another tree's platform with that tree's own bench library, so the library's
 * functions are passed in rather than imported here.
 */
import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import type { request as requestFn } from './http.ts';
import type * as platform from './platform.ts';
import { Latencies } from './stats.ts';

export interface PixPayer {
  accountId: string;
  token: string;
}

type PlatformLib = Pick<typeof platform, 'admin' | 'registerHolders' | 'fundAccounts' | 'mapLimit' | 'clientToken' | 'timed'>;

/**
 * A PIN-exempt tenant (`name`) of `count` payers with client tokens, each funded with `fundingCents` by sandbox
 * incoming Pix: payments pay no PIN check. Each step is timed and printed.
 */
export async function setUpPixPayers(lib: PlatformLib, pool: pg.Pool, name: string, count: number, fundingCents = 100_000_000n): Promise<{ tenantId: string; payers: PixPayer[] }> {
  const { tenantId } = await lib.timed('tenant:create --pin-exempt (operator CLI)', () => lib.admin('tenant:create', '--name', name, '--pin-exempt'));
  const holders = await lib.registerHolders(pool, tenantId, count, 'Pagador Carga');
  await lib.timed(`funding ${count} payers (sandbox incoming Pix)`, () => lib.fundAccounts(tenantId, holders.map((h) => h.account), () => fundingCents));
  const { key } = await lib.timed('tenant-key:create (operator CLI)', () => lib.admin('tenant-key:create', '--tenant', tenantId));
  const tokens = await lib.timed(`client tokens (POST /authenticate/clients, ${count})`, () => lib.mapLimit(holders, 4, (h) => lib.clientToken(tenantId, key, h.holder.document)));
  return { tenantId, payers: holders.map((h, i) => ({ accountId: h.account.id, token: tokens[i]! })) };
}

export interface PixLoad {
  holderUrl: string;
  request: typeof requestFn;
  tenantId: string;
  payers: readonly PixPayer[];
  clients: number;
  ms: number;
}

/** `clients` loops paying back to back for `ms`: accepted (201 or 202) a second, every latency, and the refusals. */
export async function payByKey(o: PixLoad): Promise<{ rate: number; latencies: Latencies; refused: number }> {
  const latencies = new Latencies();
  let accepted = 0;
  let refused = 0;
  const start = performance.now();
  const deadline = start + o.ms;
  await Promise.all(
    Array.from({ length: o.clients }, async (_, i) => {
      const payer = o.payers[i % o.payers.length]!;
      while (performance.now() < deadline) {
        const sent = performance.now();
        const { status } = await o.request('POST', `${o.holderUrl}/pix/payment`, {
          body: { accountId: payer.accountId, pixKey: randomUUID(), pixKeyType: 'EVP', amount: 0.01 },
          headers: { 'x-tenant-id': o.tenantId, authorization: `Bearer ${payer.token}`, 'idempotency-key': randomUUID() },
        });
        latencies.add(performance.now() - sent);
        if (status === 201 || status === 202) accepted++;
        else refused++;
      }
    }),
  );
  return { rate: accepted / ((performance.now() - start) / 1000), latencies, refused };
}
