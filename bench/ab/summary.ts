/** Prints an A/B run's slots and means: node bench/ab/summary.ts <baseline.json> <current.json> <baseline name> <current name> */
import { readFileSync } from 'node:fs';

interface Slot {
  kind: 'tev' | 'pix';
  round: number;
  rate: number;
  p50: number;
  p99: number;
}

const [baselineFile, currentFile, baselineName, currentName] = process.argv.slice(2) as [string, string, string, string];
const read = (file: string) => JSON.parse(readFileSync(file, 'utf8')) as Slot[];
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
// The first TEV slot of each tree warms its api and database up: left out of the means.
const measured = (slots: Slot[], kind: Slot['kind']) => slots.filter((s) => s.kind === kind).slice(kind === 'tev' ? 1 : 0);
const [baseline, current] = [read(baselineFile), read(currentFile)];
for (const kind of ['tev', 'pix'] as const) {
  const [b, c] = [measured(baseline, kind), measured(current, kind)];
  const line = (name: string, s: Slot[]) =>
    `  ${name.padEnd(12)} ${s.map((x) => x.rate.toFixed(0).padStart(6)).join('')}   mean ${mean(s.map((x) => x.rate)).toFixed(1).padStart(7)}/s  p50 ${mean(s.map((x) => x.p50)).toFixed(1)} ms  p99 ${mean(s.map((x) => x.p99)).toFixed(1)} ms`;
  process.stdout.write(`${kind === 'tev' ? 'TEV, POST /v1/tev' : 'Pix accepted, POST /pix/payment (no drain)'}, 32 clients, per slot:\n`);
  process.stdout.write(`${line(baselineName, b)}\n${line(currentName, c)}\n`);
  process.stdout.write(`  change ${((mean(c.map((x) => x.rate)) / mean(b.map((x) => x.rate)) - 1) * 100).toFixed(1)}%\n`);
}
