/**
 * A steady Pix load to measure or profile beside: clients paying R$ 0.01 by key back to back, reported every slot.
 *
 *   node bench/profile/pix-load.ts [--clients 32] [--seconds 60] [--slot-seconds 10] [--payers 16]
 *
 * Sets up a PIN-exempt tenant of funded payers with client tokens, then runs the load and prints each slot's accepted
 * payments a second and latency, and the CPU of each part of the platform over it (from /proc), so that a change made
 * between slots (a process stopped, a priority changed, `cpu-profile.ts` attached) shows in the next one. The
 * settlement of what it pays runs beside it, as on a real platform: stop the Temporal server and the worker
 * (`pkill -STOP -f "server start-dev"; pkill -STOP -f worker/main.ts`, then `-CONT`) to measure the request path
 * alone.
 */
import { parseArgs } from 'node:util';
import { closeHttp, request } from '../lib/http.ts';
import { payByKey, setUpPixPayers } from '../lib/pix-load.ts';
import * as lib from '../lib/platform.ts';
import { cpuBetween, cpuSnapshot, describeCpu } from '../lib/proc.ts';

const { values: args } = parseArgs({
  options: {
    clients: { type: 'string', default: '32' },
    seconds: { type: 'string', default: '60' },
    'slot-seconds': { type: 'string', default: '10' },
    payers: { type: 'string', default: '16' },
  },
});
const clients = Number(args.clients);
const ms = Number(args['slot-seconds']) * 1000;
const slots = Math.max(1, Math.round((Number(args.seconds) * 1000) / ms));

const pool = lib.openPool();
const { tenantId, payers } = await setUpPixPayers(lib, pool, `bench-pix-load ${new Date().toISOString()}`, Number(args.payers));
lib.say(`tenant ${tenantId}: ${payers.length} payers, ${clients} clients, ${slots} slots of ${ms / 1000} s`);
for (let i = 1; i <= slots; i++) {
  const before = cpuSnapshot();
  const { rate, latencies, refused } = await payByKey({ holderUrl: lib.holderUrl, request, tenantId, payers, clients, ms });
  const { p50, p99 } = latencies.summary();
  lib.say(`slot ${i}: ${rate.toFixed(1)} Pix/s, p50 ${p50.toFixed(2)} ms, p99 ${p99.toFixed(1)} ms, refused ${refused}`);
  lib.say(`  CPU ${describeCpu(cpuBetween(before, cpuSnapshot()))}`);
}
closeHttp();
await pool.end();
