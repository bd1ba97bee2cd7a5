import { randomInt } from 'node:crypto';
import { afterAll } from '@jest/globals';
import { expectConforms, nonConforming } from './conformance.ts';

/** Each test file is its own client address (the test platform trusts X-Forwarded-For from loopback). */
export const CLIENT_ADDRESS = `198.51.100.${randomInt(1, 255)}`;

export interface HttpResult<T = any> {
  status: number;
  body: T;
  headers: Headers;
}

/**
 * JSON over real HTTP; `body` may be an object (sent as JSON) or a raw string (sent as is). Every answer is checked
 * against the OpenAPI document of the host that served it (support/conformance.ts): one that does not conform throws.
 */
export async function http<T = any>(
  method: string,
  url: string,
  options: { body?: unknown; headers?: Record<string, string> } = {},
): Promise<HttpResult<T>> {
  const headers: Record<string, string> = { accept: 'application/json', 'x-forwarded-for': CLIENT_ADDRESS, ...options.headers };
  let body: string | undefined;
  if (options.body !== undefined) {
    body = typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
    headers['content-type'] ??= 'application/json';
  }
  const res = await fetch(url, { method, headers, body });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    // not JSON (HTML pages)
  }
  const result = { status: res.status, body: parsed as T, headers: res.headers };
  await expectConforms(method, url, result);
  return result;
}

// A caller that swallows errors (a load generator counting failures) must not hide an answer that did not conform.
afterAll(() => {
  if (nonConforming.length > 0) throw new Error(`Answers that do not conform to their OpenAPI document:\n${nonConforming.join('\n')}`);
});
