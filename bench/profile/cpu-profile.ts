/**
 * Where a running Node process of the platform (the api, the worker, the sandbox PSP) spends its CPU, while a load
 * runs beside it: its V8 sampling profiler, reached over the inspector, for a while, then a summary.
 *
 *   node bench/profile/cpu-profile.ts --pid <pid> [--seconds 12] [--out /tmp/api.cpuprofile] [--callers writev]
 *   node bench/profile/cpu-profile.ts --from /tmp/api.cpuprofile [--callers writev]   (summarise a saved profile)
 *
 * SIGUSR1 opens the process's inspector on 127.0.0.1:9229 (Node's default; nothing else may hold that port), which
 * stays open until the process exits: profile a platform started for measuring, never a production one. Prints the
 * share of samples by package (self time), by function (self time) and by platform file (inclusive: the samples with
 * that file anywhere on their stack), and with `--callers` the stacks that lead to one function. The file opens in
 * Chrome's DevTools (Performance panel) for the rest. Idle time is a sample too, `(idle)`.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    pid: { type: 'string' },
    seconds: { type: 'string', default: '12' },
    out: { type: 'string' },
    from: { type: 'string' },
    callers: { type: 'string' },
  },
});

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
}

/** Samples the process's CPU for `seconds` through the inspector's `Profiler` domain (one sample each 200 µs). */
async function record(pid: number, seconds: number): Promise<Profile> {
  process.kill(pid, 'SIGUSR1');
  await sleep(1000);
  const [target] = (await (await fetch('http://127.0.0.1:9229/json/list')).json()) as { webSocketDebuggerUrl: string }[];
  if (!target) throw new Error(`process ${pid} opened no inspector on 127.0.0.1:9229`);
  const socket = new WebSocket(target.webSocketDebuggerUrl);
  await new Promise((resolve, reject) => {
    socket.onopen = resolve;
    socket.onerror = reject;
  });
  const answers = new Map<number, (result: unknown) => void>();
  socket.onmessage = (message) => {
    const { id, result } = JSON.parse(String(message.data)) as { id?: number; result?: unknown };
    if (id !== undefined) answers.get(id)?.(result);
  };
  let next = 0;
  const call = <T>(method: string, params: object = {}) =>
    new Promise<T>((resolve) => {
      const id = ++next;
      answers.set(id, resolve as (result: unknown) => void);
      socket.send(JSON.stringify({ id, method, params }));
    });
  await call('Profiler.enable');
  await call('Profiler.setSamplingInterval', { interval: 200 });
  await call('Profiler.start');
  await sleep(seconds * 1000);
  const { profile } = await call<{ profile: Profile }>('Profiler.stop');
  socket.close();
  return profile;
}

/** A frame's package (`pg`, `@mikro-orm/core`), platform file (`src/pix/payouts.ts`), Node module, or `(native)`. */
function placeOf(url: string): string {
  if (!url) return '(native)';
  const dependency = /node_modules\/((@[^/]+\/)?[^/]+)/.exec(url);
  if (dependency) return dependency[1]!;
  const own = /\/((src|workflows|activities|worker)\/.*)$/.exec(url);
  if (own) return own[1]!;
  return url.replace(/^.*\//, 'node:');
}

const frameName = ({ functionName, url, lineNumber }: CallFrame) => `${functionName || '(anonymous)'} ${placeOf(url)}:${lineNumber + 1}`;

function summarise(profile: Profile, callersOf: string | undefined): void {
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
  const parents = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parents.set(child, node.id);
  const hits = new Map<number, number>();
  for (const id of profile.samples) hits.set(id, (hits.get(id) ?? 0) + 1);
  const total = profile.samples.length;
  const byPlace = new Map<string, number>();
  const byFunction = new Map<string, number>();
  const byFileInclusive = new Map<string, number>();
  const callers = new Map<string, number>();
  const add = (tally: Map<string, number>, key: string, count: number) => tally.set(key, (tally.get(key) ?? 0) + count);
  for (const [id, count] of hits) {
    const frame = nodes.get(id)!.callFrame;
    add(byPlace, placeOf(frame.url), count);
    add(byFunction, frameName(frame), count);
    const stack: CallFrame[] = [];
    for (let at = parents.get(id); at !== undefined; at = parents.get(at)) stack.push(nodes.get(at)!.callFrame);
    for (const file of new Set([frame, ...stack].map((f) => placeOf(f.url)).filter((place) => place.includes('/')))) add(byFileInclusive, file, count);
    if (frame.functionName === callersOf) add(callers, stack.slice(0, 10).map(frameName).join(' < '), count);
  }
  const print = (title: string, tally: Map<string, number>, rows: number) => {
    console.log(`\n${title}`);
    for (const [key, count] of [...tally].sort((a, b) => b[1] - a[1]).slice(0, rows)) console.log(`${((100 * count) / total).toFixed(1).padStart(6)}%  ${key}`);
  };
  console.log(`${total} samples`);
  print('self time by package or file', byPlace, 25);
  print('self time by function', byFunction, 40);
  print('inclusive, by platform file', byFileInclusive, 30);
  if (callersOf) print(`stacks leading to ${callersOf}`, callers, 12);
}

const profile: Profile = values.from
  ? (JSON.parse(readFileSync(values.from, 'utf8')) as Profile)
  : await record(Number(values.pid ?? Number.NaN), Number(values.seconds));
if (values.out) writeFileSync(values.out, JSON.stringify(profile));
summarise(profile, values.callers);
