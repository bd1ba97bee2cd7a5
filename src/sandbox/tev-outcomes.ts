import type { Config } from '../config.ts';
import type { SandboxTevOutcome } from '../../workflows/contracts/tev.ts';

/**
 * The sandbox's TEV outcomes: an amount ending in ,97 resolves DONE and one ending in ,98 FAILED, both
 * `SANDBOX_TEV_RESOLVE_MS` after the request was answered `submitted_unknown`; any other amount settles at once.
 */
export function sandboxTevOutcomes(config: Pick<Config, 'SANDBOX_TEV_RESOLVE_MS'>): (amountCents: bigint) => SandboxTevOutcome | null {
  return (amountCents) => {
    const cents = amountCents % 100n;
    if (cents === 97n) return { delayMs: config.SANDBOX_TEV_RESOLVE_MS, outcome: 'DONE' };
    if (cents === 98n) return { delayMs: config.SANDBOX_TEV_RESOLVE_MS, outcome: 'FAILED' };
    return null;
  };
}
