import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from '@jest/globals';
import { ConfigError, EMBEDDED_DATABASE_URL, loadConfig } from '../src/config.ts';

/** A data directory that does not exist yet, as on a fresh install. */
const freshDataDir = () => join(mkdtempSync(join(tmpdir(), 'config-test-')), 'data');

describe('loadConfig', () => {
  test('development needs no configuration at all', () => {
    const c = loadConfig({}, freshDataDir());
    expect(c).toMatchObject({
      NODE_ENV: 'development',
      PORT: 3000,
      API_PORT: 3001,
      DATABASE_URL: EMBEDDED_DATABASE_URL,
      TEMPORAL_ADDRESS: '127.0.0.1:7233',
      TEMPORAL_NAMESPACE: 'default',
      SANDBOX: false,
      publicBaseUrl: 'http://127.0.0.1:3000',
    });
  });

  test.each([
    ['PORT', { PORT: 'abc' }],
    ['PORT', { PORT: '70000' }],
    ['DATABASE_URL', { DATABASE_URL: 'mysql://x@y/z' }],
    ['TEMPORAL_ADDRESS', { TEMPORAL_ADDRESS: 'no-port' }],
    ['JWT_SECRET', { JWT_SECRET: 'short' }],
    ['SANDBOX', { SANDBOX: 'maybe' }],
    ['LOG_LEVEL', { LOG_LEVEL: 'loud' }],
  ])('a bad %s is refused with a message naming it', (variable, env) => {
    let error: unknown;
    try {
      loadConfig(env);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).variables).toContain(variable);
    expect((error as ConfigError).message).toContain(`${variable}:`);
  });

  test('unset secrets are generated into the data directory on the first load (32 random bytes, 0600), then reused', () => {
    const dataDir = freshDataDir();
    const first = loadConfig({}, dataDir);
    expect(Buffer.from(first.JWT_SECRET, 'base64url')).toHaveLength(32);
    expect(Buffer.from(first.KEY_PEPPER, 'base64url')).toHaveLength(32);
    expect(first.KEY_PEPPER).not.toBe(first.JWT_SECRET);
    expect(readdirSync(dataDir).sort()).toEqual(['jwt-secret', 'key-pepper']);
    for (const [file, value] of [['jwt-secret', first.JWT_SECRET], ['key-pepper', first.KEY_PEPPER]] as const) {
      expect(readFileSync(join(dataDir, file), 'utf8')).toBe(value);
      expect(statSync(join(dataDir, file)).mode & 0o777).toBe(0o600);
    }

    const again = loadConfig({}, dataDir);
    expect([again.JWT_SECRET, again.KEY_PEPPER]).toEqual([first.JWT_SECRET, first.KEY_PEPPER]);
    const elsewhere = loadConfig({}, freshDataDir());
    expect([elsewhere.JWT_SECRET, elsewhere.KEY_PEPPER]).not.toContain(first.JWT_SECRET);
  });

  test('secrets set in the environment win, and nothing is generated', () => {
    const dataDir = freshDataDir();
    const c = loadConfig({ JWT_SECRET: 's'.repeat(40), KEY_PEPPER: 'p'.repeat(40) }, dataDir);
    expect([c.JWT_SECRET, c.KEY_PEPPER]).toEqual(['s'.repeat(40), 'p'.repeat(40)]);
    expect(existsSync(dataDir)).toBe(false);
  });

  test('production requires both secrets and generates none', () => {
    const dataDir = freshDataDir();
    expect(() => loadConfig({ NODE_ENV: 'production' }, dataDir)).toThrow(/JWT_SECRET: production requires it[^]*KEY_PEPPER: production requires it/);
    expect(() => loadConfig({ NODE_ENV: 'production', KEY_PEPPER: 'p'.repeat(40) }, dataDir)).toThrow(/JWT_SECRET/);
    expect(existsSync(dataDir)).toBe(false);
    const c = loadConfig({ NODE_ENV: 'production', JWT_SECRET: 's'.repeat(40), KEY_PEPPER: 'p'.repeat(40) }, dataDir);
    expect(c.NODE_ENV).toBe('production');
  });

  test('an empty variable counts as unset', () => {
    expect(loadConfig({ PORT: '' }, freshDataDir()).PORT).toBe(3000);
  });
});

describe('process start with a bad environment', () => {
  const run = (script: string, env: NodeJS.ProcessEnv) =>
    new Promise<{ code: number | null; stderr: string }>((resolve) => {
      execFile(process.execPath, [script], { env: { PATH: process.env.PATH, ...env }, timeout: 20_000 }, (error, _stdout, stderr) =>
        resolve({ code: error ? (error.code as number) : 0, stderr }),
      );
    });

  test.each(['src/main.ts', 'worker/main.ts'])('%s stops at once with a message naming the variable', async (script) => {
    const result = await run(script, { API_PORT: 'not-a-port' });
    expect(result.code).toBe(78);
    expect(result.stderr).toContain('API_PORT: Invalid input');
  });

  test.each(['src/main.ts', 'worker/main.ts'])('%s in production refuses to start without its secrets', async (script) => {
    const result = await run(script, { NODE_ENV: 'production' });
    expect(result.code).toBe(78);
    expect(result.stderr).toContain('JWT_SECRET: production requires it');
    expect(result.stderr).toContain('KEY_PEPPER: production requires it');
  });
});
