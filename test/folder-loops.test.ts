/**
 * `npm run check:folders` (scripts/check-folders.ts): no top-level folder of src/ imports a folder that imports it
 * back, and every import between them runs down the floors of its table `FLOORS`. Proven on small trees: a loop of
 * folders whose files never loop (what madge's file-level check lets through) fails and is named with its imports; an
 * import up the floors, or within one, fails though it closes no loop; a folder the table does not place fails; the
 * same tree without those imports passes; and the real tree passes, every node of the table being one of its own.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, test } from '@jest/globals';
import { FLOORS } from '../scripts/check-folders.ts';

const checkFolders = (dir: string) =>
  new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(process.execPath, ['scripts/check-folders.ts', dir], (error, stdout, stderr) => resolve({ code: error ? Number(error.code) : 0, stdout, stderr }));
  });

const trees: string[] = [];
afterAll(() => {
  for (const dir of trees) rmSync(dir, { recursive: true, force: true });
});

/** A src/-like tree of the given files (path → text) in a new temporary folder. */
function tree(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'folders-'));
  trees.push(root);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

// payments/ above transfers/: payments/pay.ts uses transfers/settle.ts, and nothing in transfers/ knows payments/.
const layered = {
  'main.ts': "import { pay } from './payments/pay.ts';\nexport const run = () => pay();\n",
  'payments/pay.ts': "import { settle } from '../transfers/settle.ts';\nexport const pay = () => settle();\n",
  'payments/held.ts': 'export interface Held { id: string }\n',
  'transfers/settle.ts': "import { round } from '../shared/money.ts';\nexport const settle = () => round(1);\n",
  'transfers/answer.ts': 'export const answer = 200;\n',
  'shared/money.ts': 'export const round = (n: number) => n;\n',
};

describe('check:folders', () => {
  test('fails on two folders that import each other, though no file imports itself back, and names the imports', async () => {
    // A type import counts: it is still an arrow from transfers/ up to payments/.
    const looped = tree({ ...layered, 'transfers/answer.ts': "import type { Held } from '../payments/held.ts';\nexport const answer = (h: Held) => h.id;\n" });
    const { code, stderr } = await checkFolders(looped);
    expect(code).toBe(1);
    expect(stderr).toContain('Folder loop: payments/ <-> transfers/');
    expect(stderr).toContain('payments/ -> transfers/: payments/pay.ts imports transfers/settle.ts');
    expect(stderr).toContain('transfers/ -> payments/: transfers/answer.ts imports payments/held.ts');
  });

  test('fails on a longer loop through a top-level file, naming every node of it', async () => {
    const looped = tree({ ...layered, 'shared/money.ts': "import { run } from '../main.ts';\nexport const round = (n: number) => (run ? n : 0);\n" });
    const { code, stderr } = await checkFolders(looped);
    expect(code).toBe(1);
    expect(stderr).toContain('Folder loop: main.ts <-> payments/ <-> shared/ <-> transfers/');
  });

  test('fails on an import up the floors that closes no loop, and names it', async () => {
    // persistence/ is at the ground and nothing of payments/ reaches it back: only the floors refuse this (a type import too).
    const upward = tree({ ...layered, 'persistence/orm.ts': "import type { Held } from '../payments/held.ts';\nexport const key = (h: Held) => h.id;\n" });
    const { code, stderr } = await checkFolders(upward);
    expect(code).toBe(1);
    expect(stderr).not.toContain('Folder loop');
    expect(stderr).toMatch(/^Import up the floors: persistence\/ \(floor 0\) -> payments\/ \(floor \d+\): persistence\/orm\.ts imports payments\/held\.ts$/m);
  });

  test('fails on an import within a floor', async () => {
    const sideways = tree({
      ...layered,
      'approvals/hold.ts': 'export const hold = () => 202;\n',
      'transfers/answer.ts': "import { hold } from '../approvals/hold.ts';\nexport const answer = hold();\n",
    });
    const { code, stderr } = await checkFolders(sideways);
    expect(code).toBe(1);
    expect(stderr).toMatch(/^Import within a floor: transfers\/ \(floor (\d+)\) -> approvals\/ \(floor \1\): transfers\/answer\.ts imports approvals\/hold\.ts$/m);
  });

  test('fails on a folder the table does not place', async () => {
    const { code, stderr } = await checkFolders(tree({ ...layered, 'loans/offer.ts': "import { round } from '../shared/money.ts';\nexport const offer = round(5);\n" }));
    expect(code).toBe(1);
    expect(stderr).toContain('No floor for loans/: give it one in FLOORS of scripts/check-folders.ts');
  });

  test('passes the same tree without the arrow back', async () => {
    const { code, stdout } = await checkFolders(tree(layered));
    expect(code).toBe(0);
    expect(stdout).toContain('No folder loop');
    expect(stdout).toContain('every import between them runs down the floors');
  });

  test('passes on src/', async () => {
    const { code, stdout, stderr } = await checkFolders('src');
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(stdout).toContain('No folder loop among the modules of src, and every import between them runs down the floors');
  });

  test('every node the table places is a folder or file of src/, once', () => {
    const nodes = FLOORS.flat();
    expect(new Set(nodes).size).toBe(nodes.length);
    expect(nodes.filter((node) => !existsSync(join('src', node)))).toEqual([]);
  });
});
