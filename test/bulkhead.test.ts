/** The bulkhead in front of the provider's notifications: how many run at once, who waits, in which order, who is refused. */
import { expect, test } from '@jest/globals';
import { Bulkhead } from '../src/shared/bulkhead.ts';
import { DomainError } from '../src/shared/errors.ts';

/** A call that runs until `finish()`, recording when it started. */
function gate(log: string[], name: string) {
  let finish!: () => void;
  const done = new Promise<void>((resolve) => (finish = resolve));
  return { run: async () => (log.push(`start ${name}`), await done, name), finish };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

test('two at once; the rest wait and run in arrival order as turns free; past the waiting bound, refused at once', async () => {
  const bulkhead = new Bulkhead(2, 2);
  const log: string[] = [];
  const calls = ['a', 'b', 'c', 'd'].map((name) => gate(log, name));
  const results = calls.map((c) => bulkhead.run(c.run));
  await settle();
  expect(log).toEqual(['start a', 'start b']);

  await expect(bulkhead.run(async () => log.push('start e'))).rejects.toEqual(new DomainError('TEMPORARILY_UNAVAILABLE'));
  expect(log).toEqual(['start a', 'start b']);

  calls[1]!.finish();
  await settle();
  expect(log).toEqual(['start a', 'start b', 'start c']);
  calls[0]!.finish();
  await settle();
  expect(log).toEqual(['start a', 'start b', 'start c', 'start d']);
  calls[2]!.finish();
  calls[3]!.finish();
  expect(await Promise.all(results)).toEqual(['a', 'b', 'c', 'd']);

  // All turns free again: a call runs at once.
  expect(await bulkhead.run(async () => 'f')).toBe('f');
});

test('a call that throws frees its turn for the next waiting one', async () => {
  const bulkhead = new Bulkhead(1, 1);
  const log: string[] = [];
  const first = gate(log, 'first');
  const failing = bulkhead.run(async () => {
    await first.run();
    throw new Error('failed');
  });
  const next = bulkhead.run(async () => 'next');
  await settle();
  first.finish();
  await expect(failing).rejects.toThrow('failed');
  expect(await next).toBe('next');
});
