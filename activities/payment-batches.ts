import { payNextChunk, startBatch } from '../src/batches/execution.ts';
import type { ActivityDeps } from './deps.ts';

export function paymentBatchActivities({ orm, config }: ActivityDeps) {
  return {
    /** The batch's start, once: pay, wait for its approval, or it ended (see `startBatch`). */
    startPaymentBatch: (batchId: string) => startBatch(orm.em.fork(), batchId),
    /** One step: the next chunk of each kind paid, the settled Pix brought up to date, the end recorded (see `payNextChunk`). */
    payPaymentBatchChunk: (batchId: string, chunkSize: number, pixInFlight: number) => payNextChunk(orm.em.fork(), config, batchId, chunkSize, pixInFlight),
  };
}
export type PaymentBatchActivities = ReturnType<typeof paymentBatchActivities>;
