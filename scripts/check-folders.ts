/**
 * `npm run check:folders [DIR]`: the modules of src/ stand in floors, and nothing imports up them. `check:cycles`
 * (madge) refuses loops between files; this refuses them between modules: each top-level folder of DIR (src/ by
 * default) is one node, each top-level file another, and an import from one node to another is an arrow (type imports
 * too). Then every arrow must run down the floors of `FLOORS`: an import of a higher floor, or of another node of the
 * same floor, fails, even where nothing imports back (a loop waiting for its other half), and so does a node the
 * table does not place. Exits 1 and names every loop and every such import, with the file that makes it.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import ts from 'typescript';

/**
 * The floors of src/, from the ground up: the one place they are written (docs/architecture.md points here). Each
 * node imports only nodes of the floors below its own; a new top-level folder or file is given its floor here.
 */
export const FLOORS: readonly (readonly string[])[] = [
  ['shared/', 'persistence/', 'logger.ts'],
  ['config.ts', 'ledger/', 'events/', 'http/'], // http/: the HTTP toolkit
  ['temporal/', 'accounts/'],
  ['cli/', 'handoff/'], // cli/: the command toolkit
  ['tenants/'],
  ['platform-context.ts', 'fees/'],
  ['identity/', 'webhooks/'],
  ['transfers/', 'approvals/', 'limits/'],
  ['pix/'],
  ['contacts/', 'batches/'],
  ['payments/', 'statements/', 'sandbox/'],
  ['schedules/', 'receipts/'], // schedules/ pays through payments/; receipts/ reads payouts as statements/ names them
  // What puts the modules together: the entity list and openDatabase; the operator CLI, which opens it, and the api's
  // two apps; the api process, which opens it and serves them.
  ['database.ts'],
  ['admin/', 'api/'],
  ['main.ts'],
];

/** Every .ts file under `dir`. */
function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return path.endsWith('.ts') ? [path] : [];
  });
}

/** The node a file belongs to: its top-level folder under `root` (`pix/`), or itself when it stands in `root`. */
function nodeOf(root: string, file: string): string | null {
  const path = relative(root, file);
  if (path.startsWith('..')) return null;
  const [first, ...rest] = path.split(sep);
  return rest.length > 0 ? `${first}/` : first!;
}

/** One import from a file of one node to a file of another. */
interface Arrow {
  from: string;
  to: string;
  file: string;
  imported: string;
}

export function folderArrows(root: string): Arrow[] {
  const arrows: Arrow[] = [];
  for (const file of sourceFiles(root)) {
    const from = nodeOf(root, file)!;
    for (const { fileName } of ts.preProcessFile(readFileSync(file, 'utf8'), true, true).importedFiles) {
      if (!fileName.startsWith('.')) continue;
      const target = resolve(dirname(file), fileName);
      const to = nodeOf(root, target);
      if (to !== null && to !== from) arrows.push({ from, to, file: relative(root, file), imported: relative(root, target) });
    }
  }
  return arrows;
}

/** The strongly connected components of more than one node (Tarjan): each is a set of folders that loop. */
export function loops(arrows: Arrow[]): string[][] {
  const next = new Map<string, Set<string>>();
  for (const a of arrows) {
    if (!next.has(a.from)) next.set(a.from, new Set());
    next.get(a.from)!.add(a.to);
  }
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (node: string) => {
    index.set(node, index.size);
    low.set(node, index.get(node)!);
    stack.push(node);
    onStack.add(node);
    for (const to of next.get(node) ?? []) {
      if (!index.has(to)) {
        visit(to);
        low.set(node, Math.min(low.get(node)!, low.get(to)!));
      } else if (onStack.has(to)) {
        low.set(node, Math.min(low.get(node)!, index.get(to)!));
      }
    }
    if (low.get(node) !== index.get(node)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(member);
    } while (member !== node);
    if (component.length > 1) found.push(component.sort());
  };
  for (const node of [...next.keys()].sort()) if (!index.has(node)) visit(node);
  return found;
}

const floorOf = new Map(FLOORS.flatMap((nodes, floor) => nodes.map((node) => [node, floor] as const)));

/** The nodes of the tree under `root` that `FLOORS` does not place. */
export function unplacedNodes(root: string): string[] {
  return [...new Set(sourceFiles(root).map((file) => nodeOf(root, file)!))].filter((node) => !floorOf.has(node)).sort();
}

/** The imports between placed nodes that do not run down the floors: up them, or within one. */
export function floorBreaches(arrows: Arrow[]): { arrow: Arrow; why: string }[] {
  return arrows.flatMap((arrow) => {
    const [from, to] = [floorOf.get(arrow.from), floorOf.get(arrow.to)];
    if (from === undefined || to === undefined || to < from) return [];
    return [{ arrow, why: `${to > from ? 'up the floors' : 'within a floor'}: ${arrow.from} (floor ${from}) -> ${arrow.to} (floor ${to})` }];
  });
}

if (import.meta.main) {
  const root = resolve(process.argv[2] ?? 'src');
  const arrows = folderArrows(root);
  const found = loops(arrows);
  const unplaced = unplacedNodes(root);
  const breaches = floorBreaches(arrows);
  for (const component of found) {
    process.stderr.write(`Folder loop: ${component.join(' <-> ')}\n`);
    for (const a of arrows) if (component.includes(a.from) && component.includes(a.to)) process.stderr.write(`  ${a.from} -> ${a.to}: ${a.file} imports ${a.imported}\n`);
  }
  for (const node of unplaced) process.stderr.write(`No floor for ${node}: give it one in FLOORS of scripts/check-folders.ts\n`);
  for (const { arrow, why } of breaches) process.stderr.write(`Import ${why}: ${arrow.file} imports ${arrow.imported}\n`);
  if (found.length === 0 && unplaced.length === 0 && breaches.length === 0) {
    process.stdout.write(`No folder loop among the modules of ${relative(process.cwd(), root) || '.'}, and every import between them runs down the floors\n`);
  } else {
    process.exitCode = 1;
  }
}
