#!/usr/bin/env bash
# The coordinated-limiting performance test: 3 demo instances on one memcached, 25 tenants, an
# open-loop load of 1000 requests a second spread over the instances, corrected for coordinated
# omission. Three runs: no limiter, direct mode, two-layer mode (sync every 200 ms). Latencies go to
# docs/bench/coordinated/<mode>/ and one percentile plot to docs/bench/coordinated/latency.png;
# memcached operations per second come from the server's own stats.
#   mvn -q -B -ntp -pl example,cli -am package -DskipTests && docs/bench/coordinated.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
RATE=${RATE:-1000} DURATION=${DURATION:-30s} SECONDS_RUN=${DURATION%s} MC_PORT=${MC_PORT:-21212}
PORTS=(18081 18082 18083)

memcached -p "$MC_PORT" -l 127.0.0.1 -U 0 -u "$(id -un)" & MC=$!
DEMOS=()
cleanup() { kill "${DEMOS[@]}" "$MC" 2>/dev/null || true; }
trap cleanup EXIT
sleep 0.5

ops() { # memcached get/incr/decr/set operations so far
  exec 3<>"/dev/tcp/127.0.0.1/$MC_PORT"
  printf 'stats\r\nquit\r\n' >&3
  awk '/STAT (get_hits|get_misses|incr_hits|incr_misses|decr_hits|decr_misses|cmd_set) / {n += $3} END {print n}' <&3
  exec 3<&-
}

run() { # mode, rules file
  local mode=$1 rules=$2 urls=()
  DEMOS=()
  for p in "${PORTS[@]}"; do
    java -jar example/target/sluice-example.jar --port "$p" --rules "$rules" --memcached "127.0.0.1:$MC_PORT" \
      > "/tmp/sluice-coordinated-$mode-$p.log" 2>&1 & DEMOS+=($!)
    urls+=(--url "http://127.0.0.1:$p/api/v1/report")
  done
  for p in "${PORTS[@]}"; do
    for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$p/health" && break; sleep 0.2; done
  done
  echo "== $mode: warm-up"
  java -jar cli/target/sluice.jar bench "${urls[@]}" --rate "$RATE" --duration 15s --keys 25 > /dev/null
  sleep 2
  local before; before=$(ops)
  echo "== $mode"
  mkdir -p "docs/bench/coordinated/$mode"
  java -jar cli/target/sluice.jar bench "${urls[@]}" --rate "$RATE" --duration "$DURATION" --keys 25 \
    --out "docs/bench/coordinated/$mode" | tee "docs/bench/coordinated/$mode/result.txt"
  local after; after=$(ops)
  echo "memcached operations: $((after - before)) in ${SECONDS_RUN} s ($(( (after - before) / SECONDS_RUN ))/s)" \
    | tee -a "docs/bench/coordinated/$mode/result.txt"
  kill "${DEMOS[@]}"; wait "${DEMOS[@]}" 2>/dev/null || true
}

run none docs/bench/off.yaml
run direct docs/bench/coordinated-direct.yaml
run two-layer docs/bench/coordinated-two-layer.yaml

java -jar cli/target/sluice.jar plot --title "3 instances, 25 tenants, $RATE requests/s" \
  --out docs/bench/coordinated/latency.png none=docs/bench/coordinated/none/latency.hgrm \
  direct=docs/bench/coordinated/direct/latency.hgrm two-layer=docs/bench/coordinated/two-layer/latency.hgrm
