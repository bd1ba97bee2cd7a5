/**
 * `npm run bundle:workflows [-- out.js]`: bundles workflows/ once so workers start without webpack
 * (WORKFLOW_BUNDLE_PATH). Tests and container images use it; `npm start` bundles at worker start instead.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, resolve } from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';

const out = resolve(process.argv[2] ?? 'data/workflow-bundle.js');
const require = createRequire(import.meta.url);
const { code } = await bundleWorkflowCode({ workflowsPath: require.resolve('../workflows/index.ts'), logger: undefined });
mkdirSync(dirname(out), { recursive: true });
writeFileSync(out, code);
process.stdout.write(`${JSON.stringify({ bundle: out, bytes: code.length })}\n`);
