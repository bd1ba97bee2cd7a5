/**
 * Workflow histories as JSON files: the object form of the generated message class (enums by name, 64-bit integers as
 * text, bytes in base64, timestamps as seconds and nanos), the form the histories were first recorded in. It is not the
 * SDK's proto3 JSON (`historyToJSON`, what `temporal workflow show --output json` writes): history-json.test.ts checks
 * that the SDK's helpers read and write these same histories.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import proto, { type temporal } from '@temporalio/proto';

const { History } = proto.temporal.api.history.v1;

export function historyToFile(history: temporal.api.history.v1.IHistory): string {
  return `${JSON.stringify(History.toObject(History.fromObject(history), { longs: String, enums: String, bytes: String }), null, 1)}\n`;
}

/** A `.json` file, or a `.json.gz` one (a long history: a payout that polled a hundred times). */
export function readHistoryFile(path: string): temporal.api.history.v1.History {
  const raw = readFileSync(path);
  return History.fromObject(JSON.parse((path.endsWith('.gz') ? gunzipSync(raw) : raw).toString('utf8')));
}

const recordedDir = fileURLToPath(new URL('../histories/', import.meta.url));

/** Every checked-in history (test/workflows/histories, written by record-histories.ts), by file name. */
export function recordedHistories(): { file: string; history: temporal.api.history.v1.History }[] {
  return readdirSync(recordedDir)
    .filter((file) => /\.json(\.gz)?$/.test(file))
    .map((file) => ({ file, history: readHistoryFile(`${recordedDir}${file}`) }));
}
