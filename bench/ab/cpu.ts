/**
 * The CPU each tree's processes used in each slot of an A/B run (bench/ab/run.sh), from /proc: the api, the worker,
 * the sandbox PSP and the driver of each tree (told apart by their working directory), each tree's PostgreSQL
 * backends (by the database named in their command line), and what both share (PostgreSQL's own processes, the
 * Temporal server). Divided by a slot's operations (bench/ab/summary.ts), it gives the CPU one TEV or one Pix costs
 * each part of the platform: a figure the machine's drift moves far less than a rate.
 *
 *   node bench/ab/cpu.ts <out dir> <rounds> <baseline tree> <current tree>   (started by run.sh; writes <out>/cpu.json)
 */
import { readFileSync, readlinkSync, writeFileSync, existsSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { clockTicksPerSecond, processes, statFields } from '../lib/proc.ts';
import { LOAD_SECONDS, SLOT_MS, treeOfSlot } from './slots.ts';

const [out, rounds, baseline, current] = process.argv.slice(2) as [string, string, string, string];
const ROUNDS = Number(rounds);

/** `a.api`, `b.postgres`, `shared.temporal`…: whose the process is, and what. */
function partOf(pid: number, command: string): string | null {
  const db = /^postgres: \S+ (\S+) /.exec(command);
  if (db) return db[1] === 'banking_ab' ? 'b.postgres' : db[1] === 'banking' ? 'a.postgres' : 'shared.postgres';
  if (command.startsWith('postgres:') || /\/bin\/postgres /.test(command)) return 'shared.postgres';
  if (/ server start-dev /.test(command)) return 'shared.temporal';
  let cwd: string;
  try {
    cwd = readlinkSync(`/proc/${pid}/cwd`);
  } catch {
    return null;
  }
  const tree = cwd === current || cwd.startsWith(`${current}/`) ? 'a' : cwd === baseline || cwd.startsWith(`${baseline}/`) ? 'b' : null;
  if (!tree) return null;
  if (/ src\/main\.ts( |$)/.test(command)) return `${tree}.api`;
  if (command.includes('worker/main.ts')) return `${tree}.worker`;
  if (command.includes('sandbox/psp/main.ts')) return `${tree}.psp`;
  if (command.includes('bench/ab/driver.ts')) return `${tree}.driver`;
  return null;
}

function snapshot(): Map<number, { part: string; ticks: number }> {
  const ticks = new Map<number, { part: string; ticks: number }>();
  for (const p of processes()) {
    const part = partOf(p.pid, p.command);
    if (!part) continue;
    try {
      ticks.set(p.pid, { part, ticks: statFields(p.pid).ticks });
    } catch {
      // exited meanwhile
    }
  }
  return ticks;
}

while (!existsSync(`${out}/start`)) await sleep(100);
const t0 = Number(readFileSync(`${out}/start`, 'utf8'));
const slots: { slot: number; tree: 'a' | 'b'; ms: Record<string, number> }[] = [];
for (let slot = 0; slot < 4 * ROUNDS; slot++) {
  await sleep(Math.max(0, t0 + slot * SLOT_MS - Date.now()));
  const before = snapshot();
  await sleep(LOAD_SECONDS * 1000);
  const after = snapshot();
  const ms: Record<string, number> = {};
  for (const [pid, now] of after) ms[now.part] = (ms[now.part] ?? 0) + ((now.ticks - (before.get(pid)?.ticks ?? 0)) / clockTicksPerSecond) * 1000;
  slots.push({ slot, tree: treeOfSlot(slot), ms });
}
writeFileSync(`${out}/cpu.json`, JSON.stringify(slots));
