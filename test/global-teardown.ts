import { rmSync } from 'node:fs';
import type { ManagedProcess } from '../scripts/lib/processes.ts';

export default async function globalTeardown(): Promise<void> {
  const { __services: services = [], __runDir: runDir } = globalThis as { __services?: ManagedProcess[]; __runDir?: string };
  for (const s of [...services].reverse()) await s.stop();
  if (runDir) rmSync(runDir, { recursive: true, force: true });
}
