import { linkSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

/**
 * The content of a file that one machine generates for itself (in ./data) when the environment does not provide it: the
 * first process that needs it writes it, readable by its owner only (0600), and every other process and every later
 * start reads the same content.
 */
export function keptFile(path: string, generate: () => string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  mkdirSync(dirname(path), { recursive: true });
  // Written aside, then linked into place: a process starting at the same moment reads the whole content or none.
  const draft = `${path}.${process.pid}`;
  writeFileSync(draft, generate(), { mode: 0o600 });
  try {
    linkSync(draft, path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  } finally {
    unlinkSync(draft);
  }
  return readFileSync(path, 'utf8');
}
