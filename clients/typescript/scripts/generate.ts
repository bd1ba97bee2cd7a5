import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import openapiTS, { astToString, COMMENT_HEADER } from 'openapi-typescript';

/**
 * The client's types, generated with openapi-typescript from the documents the platform publishes at /openapi.json.
 * Run against a platform started with the sandbox on (`npm start`), so the sandbox operations are typed too:
 *
 *   node clients/typescript/scripts/generate.ts [holderUrl] [apiUrl]
 */

export const GENERATED = {
  holder: join(dirname(fileURLToPath(import.meta.url)), '..', 'src', 'generated', 'holder.ts'),
  integration: join(dirname(fileURLToPath(import.meta.url)), '..', 'src', 'generated', 'integration.ts'),
};

/** The TypeScript of one OpenAPI document: `paths`, `components`, `operations` and `webhooks`. */
export async function generateTypes(document: object): Promise<string> {
  return COMMENT_HEADER + astToString(await openapiTS(document as never, { silent: true }));
}

async function fetchDocument(baseUrl: string): Promise<object> {
  const res = await fetch(`${baseUrl}/openapi.json`);
  if (!res.ok) throw new Error(`${baseUrl}/openapi.json answered ${res.status}`);
  return (await res.json()) as object;
}

if (import.meta.main) {
  const [holderUrl = 'http://127.0.0.1:3000', apiUrl = 'http://127.0.0.1:3001'] = process.argv.slice(2);
  writeFileSync(GENERATED.holder, await generateTypes(await fetchDocument(holderUrl)));
  writeFileSync(GENERATED.integration, await generateTypes(await fetchDocument(apiUrl)));
  process.stdout.write(`wrote ${GENERATED.holder} and ${GENERATED.integration}\n`);
}
