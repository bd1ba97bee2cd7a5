# One image for the api (default CMD), the Temporal worker (`node worker/main.ts`) and the migrations
# (`node scripts/migrate.ts`). Node 24 runs the TypeScript sources directly (type stripping): no build step.
# Debian (glibc), not alpine: the prebuilt @temporalio/core-bridge and @swc/core binaries need glibc.
# The patch version matches the `node` devDependency that pins Node for local work.
ARG NODE_IMAGE=node:24.21.0-bookworm-slim

FROM ${NODE_IMAGE} AS deps
WORKDIR /app
# Manifests first so this layer stays cached until the dependencies change.
COPY package.json package-lock.json ./
# --omit=dev skips typescript, jest, embedded-postgres and the `node` binary package (all marked dev in the lockfile).
# argon2, @temporalio/core-bridge and @swc/core ship prebuilt binaries, so no compiler toolchain is needed.
# `npm ci`: exactly the lockfile, which lists every platform's optional packages; install scripts run only as
# package.json's allowScripts decides (npm 12 blocks the others).
RUN npm ci --omit=dev --no-audit --no-fund \
 && npm cache clean --force

FROM ${NODE_IMAGE}
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=3000 \
    API_PORT=3001 \
    WORKFLOW_BUNDLE_PATH=/app/build/workflow-bundle.js
WORKDIR /app
# Code and dependencies stay owned by root: the `node` user can read them but not change them.
COPY --from=deps /app/node_modules ./node_modules
COPY package.json package-lock.json ./
COPY src ./src
COPY workflows ./workflows
COPY activities ./activities
COPY worker ./worker
COPY scripts ./scripts
# Bundle the workflow code once here (webpack + swc) so the worker does not bundle at every start.
RUN node scripts/bundle-workflows.ts "$WORKFLOW_BUNDLE_PATH"

USER node
EXPOSE 3000 3001
# Slim images have no curl: ask both APIs with Node's fetch.
HEALTHCHECK --interval=15s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "Promise.all([process.env.PORT||3000,process.env.API_PORT||3001].map(p=>fetch('http://127.0.0.1:'+p+'/health',{signal:AbortSignal.timeout(4000)}).then(r=>{if(!r.ok)throw new Error(p+' answered '+r.status)}))).then(()=>process.exit(0),e=>{console.error(String(e));process.exit(1)})"]
# A larger young generation for the api: fewer scavenges per request under load (see scripts/start.ts).
CMD ["node", "--max-semi-space-size=32", "src/main.ts"]
