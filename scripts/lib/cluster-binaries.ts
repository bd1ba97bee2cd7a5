import { execFileSync, spawnSync } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';
import { TEMPORAL_SERVER_VERSION, TEMPORAL_UI_VERSION } from './cluster-topology.ts';

/** What `npm run start:cluster` runs besides Node: the Temporal server, its schema tool, its UI and HAProxy. */
export interface ClusterBinaries {
  temporalServer: string;
  temporalSqlTool: string;
  temporalUi: string;
  haproxy: string;
}

const executable = (path: string) => {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
};

function onPath(name: string): string | null {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) if (dir && executable(join(dir, name))) return join(dir, name);
  for (const dir of ['/usr/sbin', '/usr/local/sbin']) if (executable(join(dir, name))) return join(dir, name);
  return null;
}

/**
 * Installs Go packages into a directory of their own version: their commands are named `server` and `sql`, which
 * would collide in `$(go env GOPATH)/bin` (the server's and the UI's are both `server`).
 */
function goInstalled(dir: string, packages: string[], log: (line: string) => void): void {
  const names = packages.map((p) => p.split('@')[0]!.split('/').pop()!);
  if (names.every((name) => executable(join(dir, name)))) return;
  log(`Building ${packages.join(' ')} into ${dir} (go install; the first build takes several minutes)...`);
  const result = spawnSync('go', ['install', ...packages], { env: { ...process.env, GOBIN: dir }, stdio: ['ignore', 'inherit', 'inherit'] });
  if (result.status !== 0 || !names.every((name) => executable(join(dir, name)))) throw new Error(`go install ${packages.join(' ')} failed (exit ${result.status})`);
}

/**
 * Finds or builds what the cluster needs: the Temporal server and its schema tool from the server's Go module (one
 * build), the UI server from its Go module (which carries the built pages), and HAProxy from the system's packages
 * (installed with apt-get when missing and running as root, as on these machines).
 */
export function ensureClusterBinaries(log: (line: string) => void = console.log): ClusterBinaries {
  let gopath: string;
  try {
    gopath = execFileSync('go', ['env', 'GOPATH'], { encoding: 'utf8' }).trim();
  } catch {
    throw new Error('Go is needed to build the Temporal server (https://go.dev/dl/), as `npm start` needs it for the CLI.');
  }
  const serverDir = join(gopath, 'bin', `temporal-server-v${TEMPORAL_SERVER_VERSION}`);
  goInstalled(serverDir, [`go.temporal.io/server/cmd/server@v${TEMPORAL_SERVER_VERSION}`, `go.temporal.io/server/cmd/tools/sql@v${TEMPORAL_SERVER_VERSION}`], log);
  const uiDir = join(gopath, 'bin', `temporal-ui-server-v${TEMPORAL_UI_VERSION}`);
  goInstalled(uiDir, [`github.com/temporalio/ui-server/v2/cmd/server@v${TEMPORAL_UI_VERSION}`], log);

  let haproxy = onPath('haproxy');
  if (!haproxy) {
    if (process.getuid?.() !== 0) throw new Error('HAProxy is not installed: install it from your system packages (apt-get install haproxy) and start again.');
    log('Installing HAProxy (apt-get install -y haproxy)...');
    const update = spawnSync('apt-get', ['update', '-qq'], { stdio: ['ignore', 'inherit', 'inherit'] });
    const install = update.status === 0 ? spawnSync('apt-get', ['install', '-y', '-qq', 'haproxy'], { stdio: ['ignore', 'inherit', 'inherit'], env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } }) : update;
    haproxy = onPath('haproxy');
    if (install.status !== 0 || !haproxy) throw new Error(`apt-get install haproxy failed (exit ${install.status})`);
  }
  return { temporalServer: join(serverDir, 'server'), temporalSqlTool: join(serverDir, 'sql'), temporalUi: join(uiDir, 'server'), haproxy };
}
