import { execFile } from 'node:child_process';

export interface AdminResult {
  exitCode: number;
  out: any;
  err: any;
}

/** Runs the operator command line as a process, exactly as `npm run admin -- …` does. */
export function admin(env: NodeJS.ProcessEnv, ...args: string[]): Promise<AdminResult> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['src/admin/cli.ts', ...args], { env }, (error, stdout, stderr) => {
      const parse = (s: string) => {
        try {
          return s.trim() ? JSON.parse(s.trim().split('\n').pop()!) : undefined;
        } catch {
          return s;
        }
      };
      resolve({ exitCode: error ? (typeof error.code === 'number' ? error.code : 1) : 0, out: parse(stdout), err: parse(stderr) });
    });
  });
}

/** Runs an operator command that must succeed and returns what it printed. */
export async function adminOk(env: NodeJS.ProcessEnv, ...args: string[]): Promise<any> {
  const r = await admin(env, ...args);
  if (r.exitCode !== 0) throw new Error(`admin ${args.join(' ')} failed (${r.exitCode}): ${JSON.stringify(r.err)}`);
  return r.out;
}
