import { DomainError, refusals } from './errors.ts';

/**
 * At most `concurrency` calls of one kind at once in this process; up to `maxWaiting` more wait their turn, in arrival
 * order, and any beyond are refused with TEMPORARILY_UNAVAILABLE (503) at once, before doing anything. For work that
 * arrives in bursts beside the request path and shares its database connections and cores (the Pix provider's
 * notifications): a burst then takes its turns instead of taking every connection and core at once.
 */
export class Bulkhead {
  /** What `run` may refuse, for the declarations of the use cases behind one. */
  static readonly raises = refusals('TEMPORARILY_UNAVAILABLE');
  private readonly concurrency: number;
  private readonly maxWaiting: number;
  private running = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(concurrency: number, maxWaiting: number) {
    this.concurrency = concurrency;
    this.maxWaiting = maxWaiting;
  }

  async run<T>(work: () => Promise<T>): Promise<T> {
    if (this.running >= this.concurrency) {
      if (this.waiting.length >= this.maxWaiting) throw new DomainError('TEMPORARILY_UNAVAILABLE');
      // The turn is handed over by the call that ends (`running` stays counted for it), so no late arrival overtakes.
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    } else {
      this.running++;
    }
    try {
      return await work();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.running--;
    }
  }
}
