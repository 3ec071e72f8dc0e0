#!/usr/bin/env bash
# What the non-blocking adapters cost a server, in CPU per request: the server process's CPU time
# (utime + stime, from /proc/PID/stat) over a load run, divided by the requests it served, with
# the adapter off and on. WebFlux (SluiceWebFilter on Reactor Netty) is loaded by wrk, 1,000 API
# keys in turn (wrk-keys.lua, the rules of wrk-rules.yaml); gRPC (SluiceServerInterceptor on
# grpc-netty-shaded, a unary echo run on the transport's event loops) by a client JVM keeping
# IN_FLIGHT calls in flight, 1,000 API keys in turn in the metadata (grpc-rules.yaml: the same
# three counters). Each row is its own server JVM, warmed up until its JIT is quiet (jit-quiet.sh);
# rounds alternate their order.
#
#   docs/bench/reactive.sh                    # 3 rounds of 10 s
#   ROUNDS=2 DURATION=8 docs/bench/reactive.sh
#   SKIP_BUILD=1 docs/bench/reactive.sh       # test classes already compiled
#   ONLY='WebFlux' docs/bench/reactive.sh     # only the rows whose name matches
#
# Run it alone on the machine (flock /tmp/sluice-build.lock docs/bench/reactive.sh where builds
# share the machine).
set -euo pipefail
# shellcheck source=jit-quiet.sh
. "$(dirname "$0")/jit-quiet.sh"

ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-10}
WARMUP=${WARMUP:-15}
CONNECTIONS=${CONNECTIONS:-8}
IN_FLIGHT=${IN_FLIGHT:-8}
PORT=${PORT:-18280}
MVN=${MVN:-mvn}

cd "$(dirname "$0")/../.."
ROOT=$(pwd)

for tool in wrk memcached curl; do
  command -v "$tool" >/dev/null || { echo "needs $tool (apt-get install -y $tool)" >&2; exit 1; }
done

if [ -z "${SKIP_BUILD:-}" ]; then
  echo "compiling the adapters' test classes and writing their class paths…" >&2
  $MVN -q -B -ntp -pl sluice-webflux,sluice-grpc -am test-compile dependency:build-classpath \
    -Dmdep.outputFile=target/bench-classpath.txt -Dmdep.includeScope=test >&2
fi
cp_of() { echo "$ROOT/$1/target/test-classes:$ROOT/$1/target/classes:$(cat "$ROOT/$1/target/bench-classpath.txt")"; }
WEBFLUX_CP=$(cp_of sluice-webflux)
GRPC_CP=$(cp_of sluice-grpc)
TICK=$(getconf CLK_TCK)

WORK=$(mktemp -d)
PIDS=()
cleanup() {
  for p in "${PIDS[@]:-}"; do kill "$p" 2>/dev/null || true; done
  rm -rf "$WORK"
}
trap cleanup EXIT

MC_PORT=$((PORT + 100))
MC_USER=()
[ "$(id -u)" -eq 0 ] && MC_USER=(-u root)
memcached -l 127.0.0.1 -p "$MC_PORT" -U 0 -m 256 -t 2 "${MC_USER[@]}" &
PIDS+=($!)
MC="127.0.0.1:$MC_PORT"
HTTP_RULES="$ROOT/docs/bench/wrk-rules.yaml"
GRPC_RULES="$ROOT/docs/bench/grpc-rules.yaml"

# row name | kind | port | server command
ROWS_ALL=(
  "WebFlux: off|http|$PORT|java -cp $WEBFLUX_CP dev.sluice.webflux.BenchServer $PORT off"
  "WebFlux: SluiceWebFilter in memory|http|$((PORT + 1))|java -cp $WEBFLUX_CP dev.sluice.webflux.BenchServer $((PORT + 1)) sluice $HTTP_RULES"
  "WebFlux: SluiceWebFilter on memcached|http|$((PORT + 2))|java -cp $WEBFLUX_CP dev.sluice.webflux.BenchServer $((PORT + 2)) sluice $HTTP_RULES $MC"
  "gRPC: off|grpc|$((PORT + 10))|java -cp $GRPC_CP dev.sluice.grpc.Bench server $((PORT + 10)) off"
  "gRPC: SluiceServerInterceptor in memory|grpc|$((PORT + 11))|java -cp $GRPC_CP dev.sluice.grpc.Bench server $((PORT + 11)) sluice $GRPC_RULES"
  "gRPC: SluiceServerInterceptor on memcached|grpc|$((PORT + 12))|java -cp $GRPC_CP dev.sluice.grpc.Bench server $((PORT + 12)) sluice $GRPC_RULES $MC"
)
ROWS=()
for row in "${ROWS_ALL[@]}"; do
  [[ "${row%%|*}" =~ ${ONLY:-.} ]] && ROWS+=("$row")
done

cpu_ticks() {
  awk '{ sub(/^.*\) /, ""); print $12 + $13 }' "/proc/$1/stat"
}

await_log() { # log file
  for _ in $(seq 300); do
    grep -q "listening on" "$1" 2>/dev/null && return
    sleep 0.2
  done
  echo "no server started: $1" >&2
  cat "$1" >&2
  exit 1
}

# kind port seconds -> "requests failed"
load() {
  local out
  if [ "$1" = http ]; then
    out=$(wrk -t1 -c"$CONNECTIONS" -d"$3s" -s "$ROOT/docs/bench/wrk-keys.lua" "http://127.0.0.1:$2")
    echo "$(echo "$out" | awk '/requests in/ {print $1}') $(echo "$out" | awk '/Non-2xx/ {print $NF}' | grep . || echo 0)"
  else
    java -cp "$GRPC_CP" dev.sluice.grpc.Bench client "$2" "$3" "$IN_FLIGHT" | awk '{print $1, $3}'
  fi
}

declare -A ROW_PID
for row in "${ROWS[@]}"; do
  IFS='|' read -r name kind port cmd <<<"$row"
  $cmd >"$WORK/$port.log" 2>&1 &
  ROW_PID[$port]=$!
  PIDS+=($!)
done
echo "warming each server up for ${WARMUP}s…" >&2
for row in "${ROWS[@]}"; do
  IFS='|' read -r name kind port cmd <<<"$row"
  await_log "$WORK/$port.log"
  load "$kind" "$port" "$WARMUP" >/dev/null
  until_jit_quiet "${ROW_PID[$port]}" load "$kind" "$port" 5
done

RESULTS="$WORK/results"
: >"$RESULTS"
for r in $(seq "$ROUNDS"); do
  order=("${!ROWS[@]}")
  if [ $((r % 2)) -eq 0 ]; then
    mapfile -t order < <(printf '%s\n' "${order[@]}" | sort -rn)
  fi
  for i in "${order[@]}"; do
    IFS='|' read -r name kind port cmd <<<"${ROWS[$i]}"
    pid=${ROW_PID[$port]}
    load "$kind" "$port" 2 >/dev/null
    s0=$(cpu_ticks "$pid")
    read -r n bad < <(load "$kind" "$port" "$DURATION")
    s1=$(cpu_ticks "$pid")
    us=$(awk -v a="$s0" -v b="$s1" -v n="$n" -v t="$TICK" 'BEGIN { printf "%.2f", (b - a) / t * 1e6 / n }')
    rps=$(awk -v n="$n" -v d="$DURATION" 'BEGIN { printf "%.0f", n / d }')
    echo "round $r/$ROUNDS, $name: $us µs/request, $rps requests/s, $bad failed" >&2
    echo "$i|$kind|$name|$us|$rps|$bad|$r" >>"$RESULTS"
  done
done

echo
echo "$ROUNDS rounds of ${DURATION}s, wrk -t1 -c$CONNECTIONS (WebFlux), $IN_FLIGHT calls in flight (gRPC), $(nproc) cores, $(date -u +%Y-%m-%d)."
echo "Server CPU per request in µs, the median over the rounds; \"over off\": the median of each"
echo "round's difference from the same kind's off row, each round's in brackets."
echo
echo "| server | CPU µs/request | over off | requests/s | failed |"
echo "|---|---:|---:|---:|---:|"
sort -t'|' -k1,1n -k7,7n "$RESULTS" | awk -F'|' '
  function median(list,   a, i, j, t, n) {
    n = split(list, a, " ")
    for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
  }
  {
    i = ++lines; key[i] = $1; kind[i] = $2; rnd[i] = $7; cpu[i] = $4
    name[$1] = $3; c[$1] = c[$1] " " $4; rps[$1] = rps[$1] " " $5; bad[$1] += $6
    if (!($1 in seen)) { order[++n] = $1; seen[$1] = 1 }
    if ($3 ~ /: off$/) { base[$2, $7] = $4 }
  }
  END {
    for (i = 1; i <= lines; i++) {
      d[key[i]] = d[key[i]] " " sprintf("%+.1f", cpu[i] - base[kind[i], rnd[i]])
    }
    for (k = 1; k <= n; k++) {
      x = order[k]
      printf "| %s | %.1f | %+.1f [%s ] | %.0f | %d |\n", name[x], median(c[x]), median(d[x]), d[x], median(rps[x]), bad[x]
    }
  }'
