/** The A/B run's clock (bench/ab/run.sh): slots of SLOT_MS from the start, each tree's load in every other one. */
export const SLOT_MS = 12_000;
/** How long a slot's load runs; the rest of the slot lets its requests finish before the other tree's slot. */
export const LOAD_SECONDS = 9;
/** The baseline (`b`) loads the even slots, the current tree (`a`) the odd ones (driver.ts's OFFSET). */
export const treeOfSlot = (slot: number): 'a' | 'b' => (slot % 2 === 0 ? 'b' : 'a');
