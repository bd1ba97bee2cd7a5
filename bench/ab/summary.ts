/**
 * Prints an A/B run's slots and means, and with cpu.json (bench/ab/cpu.ts) the CPU of one operation by part:
 *   node bench/ab/summary.ts <baseline.json> <current.json> <baseline name> <current name> [cpu.json]
 */
import { existsSync, readFileSync } from 'node:fs';
import { LOAD_SECONDS } from './slots.ts';

interface Slot {
  kind: 'tev' | 'pix';
  round: number;
  slot: number;
  rate: number;
  p50: number;
  p99: number;
}

const [baselineFile, currentFile, baselineName, currentName, cpuFile] = process.argv.slice(2) as [string, string, string, string, string | undefined];
const cpu: { slot: number; ms: Record<string, number> }[] = cpuFile && existsSync(cpuFile) ? JSON.parse(readFileSync(cpuFile, 'utf8')) : [];
/** The parts cpu.ts tells apart: the tree's own, then what both share (charged to the tree whose slot it is). */
const PARTS = ['api', 'postgres', 'worker', 'psp', 'driver', 'shared.postgres', 'shared.temporal'];
const read = (file: string) => JSON.parse(readFileSync(file, 'utf8')) as Slot[];
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
// The first TEV slot of each tree warms its api and database up: left out of the means.
const measured = (slots: Slot[], kind: Slot['kind']) => slots.filter((s) => s.kind === kind).slice(kind === 'tev' ? 1 : 0);
const [baseline, current] = [read(baselineFile), read(currentFile)];
for (const kind of ['tev', 'pix'] as const) {
  const [b, c] = [measured(baseline, kind), measured(current, kind)];
  const line = (name: string, s: Slot[]) =>
    `  ${name.padEnd(12)} ${s.map((x) => x.rate.toFixed(0).padStart(6)).join('')}   mean ${mean(s.map((x) => x.rate)).toFixed(1).padStart(7)}/s  p50 ${mean(s.map((x) => x.p50)).toFixed(1)} ms  p99 ${mean(s.map((x) => x.p99)).toFixed(1)} ms`;
  process.stdout.write(`${kind === 'tev' ? 'TEV, POST /v1/tev' : 'Pix accepted, POST /pix/payment (no drain)'}, ${kind === 'tev' ? 32 : (process.env.PIX_CLIENTS ?? 32)} clients, per slot:\n`);
  process.stdout.write(`${line(baselineName, b)}\n${line(currentName, c)}\n`);
  process.stdout.write(`  change ${((mean(c.map((x) => x.rate)) / mean(b.map((x) => x.rate)) - 1) * 100).toFixed(1)}%\n`);
  if (cpu.length === 0) continue;
  // ms of CPU per operation: each part's CPU over the tree's measured slots, divided by their operations.
  const perOperation = (tree: 'a' | 'b', slots: Slot[]) => {
    const operations = slots.reduce((sum, x) => sum + x.rate * LOAD_SECONDS, 0);
    const part = (name: string) => slots.reduce((sum, x) => sum + (cpu.find((c) => c.slot === x.slot)?.ms[name.includes('.') ? name : `${tree}.${name}`] ?? 0), 0) / operations;
    const parts = PARTS.map((name) => [name, part(name)] as const);
    return `${parts.map(([name, ms]) => `${name} ${ms.toFixed(3)}`).join(' · ')} · all ${parts.reduce((sum, [, ms]) => sum + ms, 0).toFixed(3)}`;
  };
  process.stdout.write(`  CPU ms per operation:\n    ${baselineName.padEnd(12)} ${perOperation('b', b)}\n    ${currentName.padEnd(12)} ${perOperation('a', c)}\n`);
}
