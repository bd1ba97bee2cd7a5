/** Latency samples in milliseconds and their percentiles (nearest rank on the sorted samples). */
export class Latencies {
  private readonly samples: number[] = [];

  add(ms: number): void {
    this.samples.push(ms);
  }

  get count(): number {
    return this.samples.length;
  }

  summary(): { p50: number; p95: number; p99: number; max: number } {
    const sorted = Float64Array.from(this.samples).sort();
    const at = (p: number) => (sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!);
    return { p50: at(50), p95: at(95), p99: at(99), max: sorted.length ? sorted[sorted.length - 1]! : NaN };
  }

  /** `label  n=…  p50 … p95 … p99 … max … ms` */
  line(label: string): string {
    const s = this.summary();
    const f = (v: number) => (Number.isNaN(v) ? '-' : v.toFixed(1)).padStart(8);
    return `${label.padEnd(28)} n=${String(this.count).padStart(7)}  p50${f(s.p50)}  p95${f(s.p95)}  p99${f(s.p99)}  max${f(s.max)} ms`;
  }
}

/** Milliseconds since `start` (a `performance.now()` value). */
export const since = (start: number) => performance.now() - start;

export const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

/**
 * Two runs to compare, in the order of a round: A then B in odd rounds, B then A in even ones (ABBA). On a machine whose
 * speed drifts during a run (the shared machine slowed by half within one here), each side then runs first as often as
 * second, and a steady drift weighs on both alike instead of on whichever always runs second.
 */
export const abbaOrder = <T>(round: number, a: T, b: T): [T, T] => (round % 2 === 1 ? [a, b] : [b, a]);
