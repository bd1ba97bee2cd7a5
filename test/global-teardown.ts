import type { ManagedProcess } from '../scripts/lib/processes.ts';

export default async function globalTeardown(): Promise<void> {
  const services = (globalThis as { __services?: ManagedProcess[] }).__services ?? [];
  for (const s of [...services].reverse()) await s.stop();
}
