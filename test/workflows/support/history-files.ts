/**
 * Workflow histories as JSON files. Not the SDK's `historyToJSON`/`historyFromJSON` (the proto3 JSON that
 * `temporal workflow show --output json` writes): in this install @temporalio/common and @temporalio/proto each carry
 * their own copy of protobufjs, and those helpers fail with "type must be a Type". The generated message class
 * round-trips a history by itself: enums by name, 64-bit integers as text, bytes in base64.
 */
import { readFileSync } from 'node:fs';
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
