import { execFileSync, spawnSync } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

/** The CLI version we build: later tags carry `replace` directives and cannot be `go install`ed. */
export const TEMPORAL_CLI_MODULE = 'github.com/temporalio/cli/cmd/temporal@v1.5.1';

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function goBin(): string | null {
  try {
    const gopath = execFileSync('go', ['env', 'GOPATH'], { encoding: 'utf8' }).trim();
    return gopath ? join(gopath, 'bin') : null;
  } catch {
    return null;
  }
}

/** Finds `temporal` (TEMPORAL_CLI, PATH, then `$(go env GOPATH)/bin`) or builds it with Go; returns its path. */
export function ensureTemporalBinary(log: (line: string) => void = console.log): string {
  const explicit = process.env.TEMPORAL_CLI;
  if (explicit) {
    if (executable(explicit)) return explicit;
    throw new Error(`TEMPORAL_CLI=${explicit} is not an executable file`);
  }
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (dir && executable(join(dir, 'temporal'))) return join(dir, 'temporal');
  }
  const bin = goBin();
  if (bin && executable(join(bin, 'temporal'))) return join(bin, 'temporal');
  if (!bin) {
    throw new Error(
      'The Temporal CLI is not installed and Go is not available to build it. Install Go (https://go.dev/dl/) and run\n' +
        `  go install ${TEMPORAL_CLI_MODULE}\nor install the CLI from https://docs.temporal.io/cli and put it on PATH (or set TEMPORAL_CLI).`,
    );
  }
  log(`Building the Temporal CLI (go install ${TEMPORAL_CLI_MODULE}); the first build takes a few minutes...`);
  const result = spawnSync('go', ['install', TEMPORAL_CLI_MODULE], { stdio: ['ignore', 'inherit', 'inherit'] });
  if (result.status !== 0 || !executable(join(bin, 'temporal'))) {
    throw new Error(`go install ${TEMPORAL_CLI_MODULE} failed (exit ${result.status})`);
  }
  return join(bin, 'temporal');
}
