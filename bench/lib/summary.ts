import { say } from './platform.ts';
import type { Latencies } from './stats.ts';

/** One line of a bench's closing table: a rate with its latencies, errors and the target it is held to. */
export interface Figure {
  what: string;
  rate: number;
  latencies: Latencies;
  errors: number;
  target?: string;
}

/** One decimal, right-aligned; `-` where a figure has no value (no latencies, a phase that never ended). */
const number = (v: number) => (Number.isNaN(v) ? '-' : v.toFixed(1)).padStart(8);

/** The closing table: every figure of the run, then the ratios between them. */
export function printSummary(figures: Figure[], ratios: [string, number, string?][]) {
  say('\nsummary (one run, same machine, same servers):');
  say(`  ${'what'.padEnd(46)} ${'/s'.padStart(8)} ${'p50 ms'.padStart(8)} ${'p99 ms'.padStart(8)} ${'errors'.padStart(7)}  target`);
  for (const f of figures) {
    const { p50, p99 } = f.latencies.summary();
    say(`  ${f.what.padEnd(46)} ${number(f.rate)} ${number(p50)} ${number(p99)} ${String(f.errors).padStart(7)}  ${f.target ?? ''}`);
  }
  for (const [what, value, target] of ratios) say(`  ${what.padEnd(46)} ${value.toFixed(2).padStart(8)}  ${target ?? ''}`);
}
