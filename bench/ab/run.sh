#!/bin/bash
# An A/B of two trees of this repository in one sitting: bench/ab/run.sh <baseline tree> [rounds] [Pix clients]
#
# Both platforms share one embedded PostgreSQL (the current tree's, on a fresh ./data; the baseline in its own database,
# banking_ab) and one Temporal dev server, each on its own ports and task queue, so the machine, the server and its
# settings are the same for both. Their loads alternate in 12 s slots (driver.ts): `rounds` TEV slots each (32 clients,
# bench/tev.ts's mix; the first is a warm-up), then `rounds` Pix slots each (32 clients, or the third argument's count:
# 1 for a payment's latency alone; R$ 0.01 by key) with the Temporal server and both workers stopped (SIGSTOP), so
# that Pix measures the request path alone, without a drain beside it. Prints each slot's figures and writes them to /tmp/bench-ab/<a|b>.json, and the CPU one operation cost
# each part of the platform, from /proc (cpu.ts).
#
# The baseline tree is a git worktree of another commit with node_modules linked, e.g.
#   git worktree add --detach /tmp/baseline a9afc99 && ln -s "$PWD/node_modules" /tmp/baseline/node_modules
# or installed on its own (`npm install` in it) when its dependencies differ: a9afc99's api still imports pino-http.
# Nothing else should run on the machine meanwhile.
set -eu
BASELINE=$(cd "$1" && pwd)
CURRENT=$(cd "$(dirname "$0")/../.." && pwd)
ROUNDS=${2:-4}
PIX_CLIENTS=${3:-32}
OUT=/tmp/bench-ab
# Node 24 from the npm package, as npm start runs it.
export PATH="$CURRENT/node_modules/.bin:$PATH"
A_PID=
B_PID=
mkdir -p $OUT && rm -f $OUT/*
# The baseline reaches the shared server as the current tree does, by its Unix socket (scripts/lib/embedded-postgres.ts),
# whatever its own version would have used: the A/B compares the code, not the transport.
SOCKET=$(node -e 'process.stdout.write(encodeURIComponent(process.argv[1]))' "$CURRENT/data/pg")
B_ENV="DATABASE_URL=postgres://postgres:postgres@$SOCKET:5433/banking_ab TEMPORAL_ADDRESS=127.0.0.1:7233 PORT=3100 API_PORT=3101 PIX_PROVIDER_URL=http://127.0.0.1:3102 TEMPORAL_TASK_QUEUE=ab-baseline"
ready() { for _ in $(seq 1 240); do grep -q "platform ready" "$1" && return 0; sleep 1; done; echo "not ready: $1"; tail "$1"; exit 1; }
stop() { pkill -CONT -f "server start-dev" || true; pkill -CONT -f "worker/main.ts" || true; kill -INT $A_PID $B_PID 2>/dev/null || true; wait || true; }
trap stop EXIT

cd "$CURRENT" && rm -rf data && { node scripts/start.ts > $OUT/a.platform 2>&1 & A_PID=$!; }
ready $OUT/a.platform
PGPASSWORD=postgres psql -q -h 127.0.0.1 -p 5433 -U postgres -d banking -c 'create database banking_ab'
cd "$BASELINE" && rm -rf data && { env $B_ENV node scripts/start.ts > $OUT/b.platform 2>&1 & B_PID=$!; }
ready $OUT/b.platform

driver=$CURRENT/bench/ab/driver.ts
(cd "$BASELINE" && env $B_ENV TREE="$BASELINE" NAME=b OFFSET=0 ROUNDS=$ROUNDS PIX_CLIENTS=$PIX_CLIENTS OUT=$OUT node $driver > $OUT/b.log 2>&1) &
(cd "$CURRENT" && TREE="$CURRENT" NAME=a OFFSET=1 ROUNDS=$ROUNDS PIX_CLIENTS=$PIX_CLIENTS OUT=$OUT node $driver > $OUT/a.log 2>&1) &
node "$CURRENT/bench/ab/cpu.ts" $OUT $ROUNDS "$BASELINE" "$CURRENT" > $OUT/cpu.log 2>&1 &
for _ in $(seq 1 900); do [ -f $OUT/a.ready ] && [ -f $OUT/b.ready ] && break; sleep 1; done
echo $(( $(date +%s%3N) + 3000 )) > $OUT/start
sleep $(( 3 + 24 * ROUNDS ))
pkill -STOP -f "server start-dev"; pkill -STOP -f "worker/main.ts"
for _ in $(seq 1 300); do [ -f $OUT/a.json ] && [ -f $OUT/b.json ] && [ -f $OUT/cpu.json ] && break; sleep 1; done
PIX_CLIENTS=$PIX_CLIENTS node "$CURRENT/bench/ab/summary.ts" $OUT/b.json $OUT/a.json "$(git -C "$BASELINE" rev-parse --short HEAD)" "$(git -C "$CURRENT" rev-parse --short HEAD)" $OUT/cpu.json
