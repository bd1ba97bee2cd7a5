/**
 * `npm run check:folders [DIR]`: no folder of src/ imports a folder that imports it back. `check:cycles` (madge)
 * refuses loops between files; this refuses them between modules: each top-level folder of DIR (src/ by default) is
 * one node, each top-level file another, and an import from one node to another is an arrow (type imports too).
 * Exits 1 and names every loop, with the imports that make it, when the graph has one.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import ts from 'typescript';

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

if (import.meta.main) {
  const root = resolve(process.argv[2] ?? 'src');
  const arrows = folderArrows(root);
  const found = loops(arrows);
  if (found.length === 0) {
    process.stdout.write(`No folder loop among the modules of ${relative(process.cwd(), root) || '.'}\n`);
  } else {
    for (const component of found) {
      process.stderr.write(`Folder loop: ${component.join(' <-> ')}\n`);
      for (const a of arrows) if (component.includes(a.from) && component.includes(a.to)) process.stderr.write(`  ${a.from} -> ${a.to}: ${a.file} imports ${a.imported}\n`);
    }
    process.exitCode = 1;
  }
}
