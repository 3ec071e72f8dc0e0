#!/usr/bin/env bash
# Where the demo's CPU goes, by thread: each thread's CPU time (utime + stime, from
# /proc/PID/task/TID/stat) over a wrk run, divided by the requests served, summed over threads of
# one name (Grizzly's workers, its selector, sluice-background, spymemcached's I/O thread and
# listener pool, the JIT, GC), after WARMUP of load and then until the JIT is quiet (jit-quiet.sh).
# Unlike JFR's execution samples, which also count a thread that is runnable but waiting for a
# core, this is CPU spent. The load and rules are cost.sh's.
#
#   docs/bench/thread-cost.sh off | in-memory | memcached | two-layer    # ROUNDS=3 runs of 10 s
#   JAR=/path/to/other/sluice-example.jar docs/bench/thread-cost.sh two-layer
#
# Run it under the build lock where builds share the machine.
set -euo pipefail
# shellcheck source=jit-quiet.sh
. "$(dirname "$0")/jit-quiet.sh"
MODE=${1:?off, in-memory, memcached or two-layer}
ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-10s}
WARMUP=${WARMUP:-25s}
PORT=${PORT:-18700}
cd "$(dirname "$0")/../.."
JAR=${JAR:-$PWD/example/target/sluice-example.jar}
WORK=$(mktemp -d)
RULES=docs/bench/wrk-rules.yaml
ARGS=()
case $MODE in
  off) RULES=docs/bench/off.yaml ;;
  in-memory) ;;
  memcached) ARGS=(--memcached "127.0.0.1:$((PORT + 1))") ;;
  two-layer)
    { printf 'defaults:\n  sync: 200ms\n'; cat "$RULES"; } >"$WORK/rules.yaml"
    RULES=$WORK/rules.yaml
    ARGS=(--memcached "127.0.0.1:$((PORT + 1))")
    ;;
  *) echo "unknown mode: $MODE" >&2; exit 2 ;;
esac
MC_USER=()
[ "$(id -u)" -eq 0 ] && MC_USER=(-u root)
memcached -l 127.0.0.1 -p $((PORT + 1)) -U 0 -m 256 -t 2 "${MC_USER[@]}" &
MC=$!
java -jar "$JAR" --port "$PORT" --rules "$RULES" "${ARGS[@]}" >"$WORK/server.log" 2>&1 &
PID=$!
trap 'kill $PID $MC 2>/dev/null || true; rm -rf "$WORK"' EXIT
for _ in $(seq 100); do
  curl -s -o /dev/null -H 'X-Api-Key: probe' "http://127.0.0.1:$PORT/api/v1/report" && break
  sleep 0.3
done
load() { wrk -t1 -c8 -d"$1" -s docs/bench/wrk-keys.lua "http://127.0.0.1:$PORT"; }
ticks() { awk '{ sub(/^.*\) /, ""); print $12 + $13 }' "$1"; }
# CPU ticks per thread name, numbered threads of a pool (Grizzly(3), GC Thread#1) summed as one
snapshot() {
  for t in /proc/$PID/task/*; do
    printf '%s|%s\n' "$(sed -E 's/[(#-]?[0-9]+\)?$//' "$t/comm")" "$(ticks "$t/stat")"
  done | awk -F'|' '{ a[$1] += $2 } END { for (k in a) print k "|" a[k] }' | sort
}
load "$WARMUP" >/dev/null
until_jit_quiet "$PID" load 5s
HZ=$(getconf CLK_TCK)
for r in $(seq "$ROUNDS"); do
  snapshot >"$WORK/before"
  p0=$(ticks "/proc/$PID/stat")
  n=$(load "$DURATION" | awk '/requests in/ { print $1 }')
  p1=$(ticks "/proc/$PID/stat")
  snapshot >"$WORK/after"
  echo "$MODE, round $r: $n requests, the process $(awk -v a="$p0" -v b="$p1" -v n="$n" -v hz="$HZ" \
    'BEGIN { printf "%.1f", (b - a) / hz * 1e6 / n }') µs a request"
  join -t'|' "$WORK/before" "$WORK/after" | awk -F'|' -v n="$n" -v hz="$HZ" '
    { d = ($3 - $2) / hz * 1e6 / n; if (d >= 0.1) printf "  %-26s %6.2f µs\n", $1, d }' | sort -t'|' -k1,1
done
