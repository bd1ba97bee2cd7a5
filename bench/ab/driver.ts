/**
 * One tree's side of an A/B run (bench/ab/run.sh): its setup (bench/tev.ts's TEV tenant, and a PIN-exempt Pix tenant of
 * 16 funded payers with client tokens), then a load at each of its time slots, alternating with the other tree's.
 * Imports the bench library of the tree it measures (TREE), so each side runs its own version against its platform.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { payByKey, setUpPixPayers } from '../lib/pix-load.ts';
import { LOAD_SECONDS, SLOT_MS } from './slots.ts';

const TREE = process.env.TREE!;
/** `a` (the current tree) or `b` (the baseline): the slot of each round is `2 × round + OFFSET`. */
const NAME = process.env.NAME!;
const OFFSET = Number(process.env.OFFSET);
const ROUNDS = Number(process.env.ROUNDS ?? 4);
/** The Pix slots' clients: 32 measures the rate, 1 the latency of a payment alone. */
const PIX_CLIENTS = Number(process.env.PIX_CLIENTS ?? 32);
const OUT = process.env.OUT!;

const lib = await import(`${TREE}/bench/lib/platform.ts`);
const { closeHttp, request } = await import(`${TREE}/bench/lib/http.ts`);
const tl = await import(`${TREE}/bench/lib/tev-load.ts`);
const pool = lib.openPool();
const tev = await tl.setUpTev(pool, 50);
const { tenantId, payers } = await setUpPixPayers(lib, pool, `bench-ab ${NAME}`, 16);
writeFileSync(`${OUT}/${NAME}.ready`, '');
while (!existsSync(`${OUT}/start`)) await sleep(200);
const t0 = Number(readFileSync(`${OUT}/start`, 'utf8'));
const results: any[] = [];
/** PIX_CLIENTS clients paying R$ 0.01 to random EVP keys back to back for `seconds`: accepted (201 or 202) per second. */
async function pix(seconds: number) {
  const { rate, latencies, refused } = await payByKey({ holderUrl: lib.holderUrl, request, tenantId, payers, clients: PIX_CLIENTS, ms: seconds * 1000 });
  const { p50, p99 } = latencies.summary();
  return { rate, p50, p99, refused };
}
// Slots: TEV rounds first (2 slots a round), then Pix rounds.
for (let round = 0; round < 2 * ROUNDS; round++) {
  const slot = t0 + (2 * round + OFFSET) * SLOT_MS;
  await sleep(Math.max(0, slot - Date.now()));
  if (round < ROUNDS) {
    const r = await tl.runLoad(`${NAME} tev ${round}`, 32, LOAD_SECONDS, (d: number, res: any) => tl.httpClient(tev, tl.HOT_SHARE, d, res));
    const rate = tl.printLoad(r, 200, 'done'); const s = r.all.summary();
    results.push({ kind: 'tev', round, slot: 2 * round + OFFSET, rate, p50: s.p50, p99: s.p99 });
  } else {
    results.push({ kind: 'pix', round, slot: 2 * round + OFFSET, ...(await pix(LOAD_SECONDS)) });
  }
  console.log(JSON.stringify(results.at(-1)));
}
writeFileSync(`${OUT}/${NAME}.json`, JSON.stringify(results));
await pool.end(); closeHttp();
