import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from '@jest/globals';
import { ConfigError, EMBEDDED_DATABASE_URL, loadConfig } from '../src/config.ts';
import { signingCertificate } from './support/pix-signing.ts';

/** A Pix provider's notification secret in the form the standardwebhooks library takes. */
const WEBHOOK_SECRET = `whsec_${Buffer.alloc(24, 7).toString('base64')}`;

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
      LIMIT_INCREASE_DELAY: 24,
    });
    expect(loadConfig({ LIMIT_INCREASE_DELAY: '36.5' }, freshDataDir()).LIMIT_INCREASE_DELAY).toBe(36.5);
  });

  test.each([
    ['PORT', { PORT: 'abc' }],
    ['PORT', { PORT: '70000' }],
    ['DATABASE_URL', { DATABASE_URL: 'mysql://x@y/z' }],
    ['TEMPORAL_ADDRESS', { TEMPORAL_ADDRESS: 'no-port' }],
    ['JWT_SECRET', { JWT_SECRET: 'short' }],
    ['PIX_PROVIDER_API_KEY', { PIX_PROVIDER_API_KEY: 'short' }],
    ['PIX_PROVIDER_URL', { PIX_PROVIDER_URL: 'ftp://psp.example.com' }],
    ['PIX_PROVIDER_WEBHOOK_SECRET', { PIX_PROVIDER_WEBHOOK_SECRET: 's'.repeat(40) }],
    ['PIX_PROVIDER_WEBHOOK_SECRET', { PIX_PROVIDER_WEBHOOK_SECRET: 'whsec_c2hvcnQ=' }],
    ['SANDBOX', { SANDBOX: 'maybe' }],
    ['LOG_LEVEL', { LOG_LEVEL: 'loud' }],
    ['LIMIT_INCREASE_DELAY', { LIMIT_INCREASE_DELAY: '23.5' }],
    ['LIMIT_INCREASE_DELAY', { LIMIT_INCREASE_DELAY: '49' }],
    ['LIMIT_INCREASE_DELAY', { LIMIT_INCREASE_DELAY: 'a day' }],
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
    expect(readdirSync(dataDir).sort()).toEqual(['jwt-secret', 'key-pepper', 'pix-provider-api-key', 'pix-provider-webhook-secret']);
    expect(Buffer.from(first.PIX_PROVIDER_API_KEY, 'base64url')).toHaveLength(32);
    expect(first.PIX_PROVIDER_WEBHOOK_SECRET).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
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
    const c = loadConfig({ JWT_SECRET: 's'.repeat(40), KEY_PEPPER: 'p'.repeat(40), PIX_PROVIDER_WEBHOOK_SECRET: WEBHOOK_SECRET, PIX_PROVIDER_API_KEY: 'k'.repeat(40) }, dataDir);
    expect([c.JWT_SECRET, c.KEY_PEPPER]).toEqual(['s'.repeat(40), 'p'.repeat(40)]);
    expect(existsSync(dataDir)).toBe(false);
  });

  test('production requires both secrets and generates none', () => {
    const dataDir = freshDataDir();
    expect(() => loadConfig({ NODE_ENV: 'production' }, dataDir)).toThrow(/JWT_SECRET: production requires it[^]*KEY_PEPPER: production requires it/);
    expect(() => loadConfig({ NODE_ENV: 'production', KEY_PEPPER: 'p'.repeat(40) }, dataDir)).toThrow(/JWT_SECRET/);
    expect(existsSync(dataDir)).toBe(false);
    expect(() => loadConfig({ NODE_ENV: 'production', JWT_SECRET: 's'.repeat(40), KEY_PEPPER: 'p'.repeat(40), PUBLIC_BASE_URL: 'https://bank.example.com' }, dataDir)).toThrow(/PIX_PROVIDER_WEBHOOK_SECRET: production requires it/);
    const complete = { NODE_ENV: 'production', JWT_SECRET: 's'.repeat(40), KEY_PEPPER: 'p'.repeat(40), PIX_PROVIDER_WEBHOOK_SECRET: WEBHOOK_SECRET, PUBLIC_BASE_URL: 'https://bank.example.com' };
    expect(() => loadConfig(complete, dataDir)).toThrow(/PIX_PROVIDER_API_KEY: production requires it/);
    const c = loadConfig({ ...complete, PIX_PROVIDER_API_KEY: 'k'.repeat(40) }, dataDir);
    expect(c.NODE_ENV).toBe('production');
  });

  test("a trusted contact's wait: 24 h by default; production allows 24 to 48 h, development and tests any positive time", () => {
    expect(issuesOf('TRUSTED_CONTACT_DELAY_MS', {})).toEqual([]);
    expect(issuesOf('TRUSTED_CONTACT_DELAY_MS', { TRUSTED_CONTACT_DELAY_MS: '3000' })).toEqual([]);
    expect(issuesOf('TRUSTED_CONTACT_DELAY_MS', { TRUSTED_CONTACT_DELAY_MS: '0' })).toHaveLength(1);
    const production = { NODE_ENV: 'production', PIX_PROVIDER_WEBHOOK_SECRET: WEBHOOK_SECRET, PIX_PROVIDER_API_KEY: 'k'.repeat(40), PUBLIC_BASE_URL: 'https://bank.example.com' };
    expect(loadConfig({ JWT_SECRET: 's'.repeat(40), KEY_PEPPER: 'p'.repeat(40), ...production }).TRUSTED_CONTACT_DELAY_MS).toBe(86_400_000);
    for (const delay of ['86400000', '172800000']) expect(issuesOf('TRUSTED_CONTACT_DELAY_MS', { ...production, TRUSTED_CONTACT_DELAY_MS: delay })).toEqual([]);
    for (const delay of ['3000', '86399999', '172800001']) {
      expect(issuesOf('TRUSTED_CONTACT_DELAY_MS', { ...production, TRUSTED_CONTACT_DELAY_MS: delay })).toEqual([expect.stringMatching(/production requires 24 to 48 hours/)]);
    }
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

  test.each(['src/main.ts', 'worker/main.ts', 'src/sandbox/psp/main.ts'])('%s stops at once with a message naming the variable', async (script) => {
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

  test('the sandbox PSP in production refuses to start without the secrets it shares with the platform', async () => {
    const result = await run('src/sandbox/psp/main.ts', { NODE_ENV: 'production' });
    expect(result.code).toBe(78);
    expect(result.stderr).toContain('PIX_PROVIDER_API_KEY: production requires it');
    expect(result.stderr).toContain('PIX_PROVIDER_WEBHOOK_SECRET: production requires it');
  });

  test.each(['src/main.ts', 'worker/main.ts'])('%s in production refuses a PUBLIC_BASE_URL with a port', async (script) => {
    const result = await run(script, { NODE_ENV: 'production', JWT_SECRET: 's'.repeat(40), KEY_PEPPER: 'p'.repeat(40), PUBLIC_BASE_URL: 'https://bank.example.com:8443' });
    expect(result.code).toBe(78);
    expect(result.stderr).toContain('PUBLIC_BASE_URL: production requires it without a port');
  });
});

/** Issues of one variable, or [] when the environment loads. */
function issuesOf(variable: string, env: NodeJS.ProcessEnv): string[] {
  try {
    loadConfig({ JWT_SECRET: 's'.repeat(40), KEY_PEPPER: 'p'.repeat(40), ...env });
    return [];
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    return err.message.split('\n').filter((line) => new RegExp(`^${variable}[.:]`).test(line.trim()));
  }
}

describe("the charges' locations and their signature", () => {
  const production = { NODE_ENV: 'production' };

  test('production refuses a PUBLIC_BASE_URL with a port, or none (the default has one); development allows a port', () => {
    for (const url of ['https://bank.example.com:8443', 'http://bank.example.com:443', undefined]) {
      expect(issuesOf('PUBLIC_BASE_URL', { ...production, PUBLIC_BASE_URL: url })).toEqual([expect.stringMatching(/production requires it without a port/)]);
    }
    // A URL's default port is no port: the location carries none.
    for (const url of ['https://bank.example.com', 'https://bank.example.com:443', 'https://bank.example.com/api']) expect(issuesOf('PUBLIC_BASE_URL', { ...production, PUBLIC_BASE_URL: url })).toEqual([]);
    expect(issuesOf('PUBLIC_BASE_URL', { PUBLIC_BASE_URL: 'http://127.0.0.1:3000' })).toEqual([]);
  });

  test('PIX_LOCATION_ALLOWED_HOSTS takes host or host:port entries, as a URL writes them', () => {
    expect(loadConfig({ JWT_SECRET: 's'.repeat(40), KEY_PEPPER: 'p'.repeat(40), PIX_LOCATION_ALLOWED_HOSTS: ' PSP.example.com , 10.0.0.5:8443,[::1]:9443' }).PIX_LOCATION_ALLOWED_HOSTS).toEqual([
      'psp.example.com',
      '10.0.0.5:8443',
      '[::1]:9443',
    ]);
    expect(loadConfig({ JWT_SECRET: 's'.repeat(40), KEY_PEPPER: 'p'.repeat(40) }).PIX_LOCATION_ALLOWED_HOSTS).toEqual([]);
    for (const entry of ['https://psp.example.com', 'psp.example.com/cob', 'psp.example.com:443', 'user@psp.example.com', '10.0.0.5:99999']) {
      expect(issuesOf('PIX_LOCATION_ALLOWED_HOSTS', { PIX_LOCATION_ALLOWED_HOSTS: entry })).toHaveLength(1);
    }
  });

  test("PIX_SIGNING_CERT must be the signing key's certificate first, then each issuer", () => {
    const certificate = signingCertificate();
    const other = signingCertificate();
    const withKey = (key: string | undefined, chain: string) => issuesOf('PIX_SIGNING_CERT', { PIX_SIGNING_KEY: key, PIX_SIGNING_CERT: chain });
    expect(withKey(certificate.key, certificate.chain)).toEqual([]);
    expect(withKey(certificate.key, certificate.leaf)).toEqual([]);
    // Line breaks written as \n, as an environment file may hold them.
    expect(withKey(certificate.key, certificate.chain.replaceAll('\n', '\\n'))).toEqual([]);
    expect(withKey(other.key, certificate.chain)).toEqual([expect.stringMatching(/its first certificate is not PIX_SIGNING_KEY's/)]);
    expect(withKey(certificate.key, `${certificate.ca}${certificate.leaf}`)).toEqual([expect.stringMatching(/its first certificate is not PIX_SIGNING_KEY's/)]);
    expect(withKey(certificate.key, `${certificate.leaf}${other.ca}`)).toEqual([expect.stringMatching(/certificate 2 did not issue certificate 1/)]);
    expect(withKey(undefined, certificate.chain)).toEqual([expect.stringMatching(/needs PIX_SIGNING_KEY/)]);
    expect(withKey(certificate.key, 'not a certificate')).toEqual([expect.stringMatching(/must be PEM certificates/)]);
  });
});

