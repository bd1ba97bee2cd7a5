import { execFile } from 'node:child_process';
import { describe, expect, test } from '@jest/globals';
import { ConfigError, DEVELOPMENT_JWT_SECRET, EMBEDDED_DATABASE_URL, loadConfig } from '../src/config.ts';

describe('loadConfig', () => {
  test('development needs no configuration at all', () => {
    const c = loadConfig({});
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

  test('production refuses the development secrets', () => {
    expect(() => loadConfig({ NODE_ENV: 'production' })).toThrow(/JWT_SECRET: production refuses the development secret/);
    expect(() => loadConfig({ NODE_ENV: 'production', JWT_SECRET: DEVELOPMENT_JWT_SECRET, KEY_PEPPER: 'p'.repeat(40) })).toThrow(/JWT_SECRET/);
    const c = loadConfig({ NODE_ENV: 'production', JWT_SECRET: 's'.repeat(40), KEY_PEPPER: 'p'.repeat(40) });
    expect(c.NODE_ENV).toBe('production');
  });

  test('an empty variable counts as unset', () => {
    expect(loadConfig({ PORT: '' }).PORT).toBe(3000);
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

  test.each(['src/main.ts', 'worker/main.ts'])('%s in production refuses to start with the development secrets', async (script) => {
    const result = await run(script, { NODE_ENV: 'production' });
    expect(result.code).toBe(78);
    expect(result.stderr).toContain('JWT_SECRET: production refuses the development secret');
    expect(result.stderr).toContain('KEY_PEPPER: production refuses the development pepper');
  });
});
