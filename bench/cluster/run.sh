#!/usr/bin/env bash
# The single-process platform (`npm start`: one api, one worker, the Temporal CLI's dev server on SQLite) and the
# cluster (`npm run start:cluster`: two apis behind HAProxy, two workers, the Temporal server on PostgreSQL), one after
# the other in one sitting, each measured by the same short runs of bench/tev.ts (its Temporal floor included) and
# bench/pix.ts through the ports clients use (3000/3001: the api, or the load balancer). Each platform is started,
# measured and stopped (Ctrl-C, as a person would) before the next; nothing else should run on the machine.
#
#   bench/cluster/run.sh [seconds a phase, 8] [platforms, "single cluster"]
#
# Both platforms use ./data (the same PostgreSQL, ./data/pg): start from an empty ./data for comparable figures.
# Output: data/bench-cluster/<platform>-{tev,pix,platform}.log; the summary tables are the last lines of each.
set -euo pipefail
cd "$(dirname "$0")/../.."
export PATH="$PWD/node_modules/.bin:$PATH"
seconds=${1:-8}
platforms=${2:-single cluster}
out=data/bench-cluster
mkdir -p "$out"

for platform in $platforms; do
  case $platform in
    single) start=(node scripts/start.ts); ready='platform ready:' ;;
    cluster) start=(node scripts/start-cluster.ts); ready='cluster ready:' ;;
    *) echo "unknown platform $platform (single or cluster)" >&2; exit 2 ;;
  esac
  "${start[@]}" > "$out/$platform-platform.log" 2>&1 &
  pid=$!
  trap 'kill -INT $pid 2>/dev/null; wait $pid 2>/dev/null' EXIT
  until grep -q "$ready" "$out/$platform-platform.log"; do
    kill -0 $pid 2>/dev/null || { echo "$platform did not start:" >&2; tail -20 "$out/$platform-platform.log" >&2; exit 1; }
    sleep 1
  done
  echo "== $platform: $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"
  node bench/tev.ts --seconds "$seconds" --pairs 10 --clients 1,8,32 > "$out/$platform-tev.log" 2>&1 || echo "bench/tev.ts exited $? on $platform"
  node bench/pix.ts --seconds "$seconds" --payers 8 --tev-pairs 8 --steady-seconds 15 --idle-seconds 10 --cpu-seconds 5 --drain-timeout 120 \
    > "$out/$platform-pix.log" 2>&1 || echo "bench/pix.ts exited $? on $platform"
  kill -INT $pid
  wait $pid || true
  trap - EXIT
  echo "== $platform done: $out/$platform-tev.log, $out/$platform-pix.log"
done
