#!/usr/bin/env bash
# How many decisions fail open under saturation, and what onStoreFailure: local does instead.
# Two demo JVMs share one memcached; one client (one address) drives a token bucket of 1,000/s
# at 2,400/s over 16 connections, spread over both instances, on a machine that has no core to
# spare. Each mode's `sluice bench` output goes to docs/bench/fail-open/<mode>.txt.
#   mvn -q -B -ntp -pl example,cli -am package -DskipTests && docs/bench/fail-open.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
RATE=${RATE:-2400} DURATION=${DURATION:-30s} CONNECTIONS=${CONNECTIONS:-16} WARMUP=${WARMUP:-10s} TAG=${TAG:-warm}
STORE_TIMEOUT=${STORE_TIMEOUT:-50}
P1=${P1:-18081} P2=${P2:-18082} MC_PORT=${MC_PORT:-21212}
OUT=docs/bench/fail-open
mkdir -p "$OUT"

memcached -p "$MC_PORT" -l 127.0.0.1 -U 0 -u "$(id -un)" & MC=$!
DEMOS=()
trap 'kill "${DEMOS[@]}" $MC 2>/dev/null || true' EXIT

run() { # mode (allow or local)
  local mode=$1 rules="/tmp/sluice-fail-open-$1.yaml"
  cat > "$rules" <<YAML
defaults:
  key: [ip]
  onStoreFailure: $mode
  instances: 2
rules:
  - id: bucket
    match: { prefix: /api }
    algorithm: token-bucket
    tiers: [ { limit: 1000, period: 1s, burst: 100 } ]
YAML
  DEMOS=()
  for port in "$P1" "$P2"; do
    java -jar example/target/sluice-example.jar --port "$port" --rules "$rules" \
      --memcached "127.0.0.1:$MC_PORT" --store-timeout "$STORE_TIMEOUT" > "/tmp/sluice-fail-open-$mode-$port.log" 2>&1 &
    DEMOS+=($!)
  done
  for port in "$P1" "$P2"; do
    for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$port/health" && break; sleep 0.2; done
  done
  echo "== onStoreFailure: $mode"
  # A warm-up first (WARMUP=0s for none: cold JVMs, as after a deploy), on the same bucket.
  java -jar cli/target/sluice.jar bench --url "http://127.0.0.1:$P1/api/v1/report" \
    --url "http://127.0.0.1:$P2/api/v1/report" --rate "$RATE" --duration "$DURATION" \
    --connections "$CONNECTIONS" --warmup "$WARMUP" | tee "$OUT/$mode-$TAG.txt"
  grep -h "store\|ERROR\|WARN" /tmp/sluice-fail-open-$mode-*.log | head -5 || true
  kill "${DEMOS[@]}"; wait "${DEMOS[@]}" 2>/dev/null || true
}

run allow
run local
