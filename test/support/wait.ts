/** Polls `probe` until it answers a value; free of jest, so scripts such as test/workflows/record-histories.ts can use it. */
export async function waitFor<T>(probe: () => Promise<T | undefined | null | false>, timeoutMs = 45_000, what = 'condition'): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}
