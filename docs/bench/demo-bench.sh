#!/usr/bin/env bash
# Runs `sluice bench` against the demo three ways: Sluice off, in-memory store, memcached store.
# Results (text, .hgrm and PNGs) go to docs/bench/<mode>/. Needs the memcached binary on PATH.
#   mvn -q -B -ntp -pl example,cli -am package -DskipTests && docs/bench/demo-bench.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
RATE=${RATE:-1000} DURATION=${DURATION:-30s} KEYS=${KEYS:-100} PORT=${PORT:-18080} MC_PORT=${MC_PORT:-21211}
URL="http://127.0.0.1:$PORT/api/v1/report"

memcached -p "$MC_PORT" -l 127.0.0.1 -U 0 -u "$(id -un)" & MC=$!
trap 'kill $MC 2>/dev/null || true' EXIT

run() { # mode, demo arguments...
  local mode=$1; shift
  java -jar example/target/sluice-example.jar --port "$PORT" "$@" > "/tmp/sluice-demo-$mode.log" 2>&1 & local demo=$!
  for _ in $(seq 50); do curl -s -o /dev/null "http://127.0.0.1:$PORT/health" && break; sleep 0.2; done
  echo "== $mode"
  # The warm-up uses keys of its own (warmup-N), so the measured keys start with full limits.
  java -jar cli/target/sluice.jar bench --url "$URL" --rate "$RATE" --duration "$DURATION" --keys "$KEYS" \
    --warmup 10s --out "docs/bench/$mode" | tee "docs/bench/$mode/result.txt"
  kill "$demo"; wait "$demo" 2>/dev/null || true
}

mkdir -p docs/bench/off docs/bench/inmemory docs/bench/memcached
run off --rules docs/bench/off.yaml
run inmemory --rules docs/bench/limited.yaml
run memcached --rules docs/bench/limited.yaml --memcached "127.0.0.1:$MC_PORT"

java -jar cli/target/sluice.jar plot --title "sluice bench against the demo: $RATE requests/s, $KEYS keys" \
  --out docs/bench/latency.png off=docs/bench/off/latency.hgrm in-memory=docs/bench/inmemory/latency.hgrm \
  memcached=docs/bench/memcached/latency.hgrm
