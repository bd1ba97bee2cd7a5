/**
 * The SDK's proto3 JSON of a workflow history (`historyToJSON` / `historyFromJSON`, the form of
 * `temporal workflow show --output json`) works on this install. It needs the Temporal packages to share one protobufjs 8:
 * with a copy of its own under @temporalio/common and another under @temporalio/proto, the helpers fail with
 * "type must be a Type". package.json depends on protobufjs 8 directly so that npm keeps that one copy at the root
 * (and @grpc/proto-loader's protobufjs 7 nests under it).
 */
import { readFileSync, realpathSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { expect, test } from '@jest/globals';
import { historyFromJSON, historyToJSON } from '@temporalio/common/lib/proto-utils.js';
import { historyToFile, recordedHistories } from './support/history-files.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));

test('every recorded history goes through historyToJSON and back through historyFromJSON unchanged', () => {
  const histories = recordedHistories();
  expect(histories.length).toBeGreaterThanOrEqual(20);
  for (const { file, history } of histories) {
    const json = JSON.parse(historyToJSON(history)) as { events: { eventType: string; eventTime: unknown }[] };
    expect([file, json.events.length]).toEqual([file, history.events.length]);
    expect(json.events[0]).toMatchObject({ eventType: 'EVENT_TYPE_WORKFLOW_EXECUTION_STARTED', eventTime: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) });
    expect(historyToFile(historyFromJSON(json))).toBe(historyToFile(history));
  }
});

test('the Temporal packages load one and the same protobufjs 8, the only 8.x in the lockfile', () => {
  const protobufjsOf = (pkg: string) => createRequire(`${root}node_modules/${pkg}/package.json`).resolve('protobufjs/package.json');
  const loaded = new Set(['@temporalio/common', '@temporalio/proto', '@temporalio/worker', '@temporalio/client'].map(protobufjsOf));
  // Node resolves a module to its real path: the root's copy is compared as such, since node_modules may be a symlink
  // (a git worktree's points to the main checkout's).
  expect([...loaded]).toEqual([realpathSync(`${root}node_modules/protobufjs/package.json`)]);
  expect((JSON.parse(readFileSync([...loaded][0]!, 'utf8')) as { version: string }).version).toMatch(/^8\./);

  const lock = JSON.parse(readFileSync(`${root}package-lock.json`, 'utf8')) as { packages: Record<string, { version?: string }> };
  const copiesOf8 = Object.entries(lock.packages)
    .filter(([path, entry]) => path.endsWith('node_modules/protobufjs') && entry.version?.startsWith('8.'))
    .map(([path]) => path);
  expect(copiesOf8).toEqual(['node_modules/protobufjs']);
});
