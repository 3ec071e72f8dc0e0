#!/usr/bin/env bash
# Where a request's time goes, per mode, on the bare Jersey server of docs/bench/cost.sh: one JVM
# serving off, Sluice in memory, the Bucket4j peer and the filter floor on four ports; each port is
# loaded with wrk while JFR samples the JVM every 2 ms, and the samples are counted per 1,000
# requests served (dev.sluice.bench.ProfileShare). Cost per request, unlike throughput, does not
# move with the machine's speed from one minute to the next.
#
#   docs/bench/profile.sh            # 10 s a port, about two minutes
#   ROUNDS=2 docs/bench/profile.sh   # every mode twice, in turn
set -euo pipefail

DURATION=${DURATION:-10s}
PORT=${PORT:-19010}
cd "$(dirname "$0")/../.."
ROOT=$(pwd)
command -v wrk >/dev/null || { echo "needs wrk (apt-get install -y wrk)" >&2; exit 1; }
[ -f jmh/target/benchmarks.jar ] || mvn -q -B -ntp -pl jmh -am install -DskipTests >&2
JAR=$ROOT/jmh/target/benchmarks.jar
WORK=$(mktemp -d)
cat >"$WORK/cpu.jfc" <<'JFC'
<?xml version="1.0" encoding="UTF-8"?>
<configuration version="2.0">
  <event name="jdk.ExecutionSample"><setting name="enabled">true</setting><setting name="period">2 ms</setting></event>
</configuration>
JFC
java -XX:+UnlockDiagnosticVMOptions -XX:+DebugNonSafepoints -cp "$JAR" dev.sluice.bench.WrkServer \
  --port "$PORT" --rules docs/bench/wrk-rules.yaml --modes off,sluice,bucket4j,headers >"$WORK/server.log" 2>&1 &
PID=$!
trap 'kill $PID 2>/dev/null || true; rm -rf "$WORK"' EXIT
until grep -q "headers on" "$WORK/server.log"; do sleep 0.5; done
load() { wrk -t1 -c16 -d"$2" -s docs/bench/wrk-keys.lua "http://127.0.0.1:$1"; }
# JFR's first recording starts the recorder, which costs the JVM seconds: start it while warming up.
jcmd $PID JFR.start name=warm-up settings="$WORK/cpu.jfc" >/dev/null
for p in 0 1 2 3; do
  echo "warming port $((PORT + p)) up…" >&2
  load $((PORT + p)) 15s >/dev/null
done
jcmd $PID JFR.stop name=warm-up >/dev/null
for _ in $(seq "${ROUNDS:-1}"); do for p in 0 1 2 3; do
  mode=$(echo off sluice bucket4j headers | cut -d' ' -f$((p + 1)))
  echo "recording $mode…" >&2
  jcmd $PID JFR.start name=$mode settings="$WORK/cpu.jfc" filename="$WORK/$mode.jfr" >/dev/null
  n=$(load $((PORT + p)) "$DURATION" | awk '/requests in/ {print $1}')
  jcmd $PID JFR.stop name=$mode >/dev/null
  java -cp "$JAR" dev.sluice.bench.ProfileShare "$WORK/$mode.jfr" "$n" \
    dev.sluice.jaxrs. dev.sluice.http. 'dev.sluice.Engine.' dev.sluice.store. Bucket4jFilter HeadersOnly \
    ContainerFilteringStage ContainerResponse.close
done; done
