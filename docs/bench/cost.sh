#!/usr/bin/env bash
# What Sluice costs a server, in CPU per request: each server's CPU time (utime + stime of its
# process, from /proc/PID/stat) over a wrk run, divided by the requests it served; and the store's
# (memcached's or redis-server's) CPU per request beside it when a row uses one. CPU time is what a user pays, and unlike
# throughput it measures steadily on a machine whose cores wrk, the server and memcached share.
# Every limited request is allowed under three counters (two tiers per API key and one per
# address), 1,000 API keys in turn.
#
#   docs/bench/cost.sh                        # every group, 3 rounds of 10 s
#   ROUNDS=2 DURATION=8s docs/bench/cost.sh demo grizzly
#   SKIP_BUILD=1 docs/bench/cost.sh ...       # use the jars already in example/ and jmh/target
#   ONLY='off|in memory$' docs/bench/cost.sh demo   # only the rows whose name matches
#
# Groups and rows:
#   demo               the demo (Jersey on Grizzly), each row its own JVM and port, started afresh
#                      in every round (FRESH=0: one JVM per row for every round): Sluice off (no
#                      rules); in memory; in memory with 1,000 rules (the three counters' two rules
#                      and 998 that do not match the path); on memcached; two-layer (sync: 200ms)
#                      on memcached; on Redis.
#   grizzly            a bare Jersey server, one JVM, one port per mode: off, Sluice in memory, the
#                      Bucket4j filter (peer: a bucket per key, the same headers), the header-only
#                      floor (Sluice's headers with fixed values, nothing counted), off again.
#   grizzly-memcached  the same server in a second JVM: off, the raw-incr floor (three asyncIncrs,
#                      the counters' keys, through spymemcached in one round trip, deciding
#                      nothing), Sluice on memcached, off again.
#   grizzly-redis      the same server in a third JVM: off, the Redis floor (the store's count.lua
#                      for the three counters, one EVALSHA through Lettuce, deciding nothing),
#                      Sluice on Redis, off again.
#   tomcat             a plain servlet on Tomcat: off, SluiceFilter in memory, the header-only
#                      floor, off again.
#
# Every server is warmed up (WARMUP of load on each port, then until its JIT is quiet: jit-quiet.sh)
# before it is measured, and each run is preceded by 2 s of load on its port. A JVM carries its own
# luck for as long as it runs (code layout, what its JIT inlined): two demo JVMs with the same rules
# have measured 53.4 and 60.1 µs a request. So each demo row gets a new JVM in every round, and the
# median over the rounds is taken over JVMs as well as runs; the shared servers run throughout. Rounds
# alternate their order (forwards, then backwards) so a drift in the machine's speed favours no
# row. A row's cost over off is taken within each round, against the same JVM's (or, for the demo,
# the same round's) Sluice-off rows, then the median over the rounds; each round's figure in
# brackets. "Off again" is the same server as "off": its difference is the run's resolution.
# Run it alone on the machine (flock /tmp/sluice-build.lock docs/bench/cost.sh where builds share
# the machine).
set -euo pipefail
# shellcheck source=jit-quiet.sh
. "$(dirname "$0")/jit-quiet.sh"

ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-10s}
WARMUP=${WARMUP:-15s}
CONNECTIONS=${CONNECTIONS:-8}
THREADS=${THREADS:-1}
PORT=${PORT:-18080}
MVN=${MVN:-mvn}
FRESH=${FRESH:-1}
GROUPS_WANTED=${*:-demo grizzly grizzly-memcached grizzly-redis tomcat}

cd "$(dirname "$0")/../.."
ROOT=$(pwd)

for tool in wrk memcached redis-server curl; do
  command -v "$tool" >/dev/null || { echo "needs $tool (apt-get install -y $tool)" >&2; exit 1; }
done

if [ -z "${SKIP_BUILD:-}" ]; then
  echo "building the demo and the benchmark server…" >&2
  $MVN -q -B -ntp -pl example,jmh -am package -DskipTests >&2
fi
DEMO_JAR="$ROOT/example/target/sluice-example.jar"
BENCH_JAR="$ROOT/jmh/target/benchmarks.jar"
TICK=$(getconf CLK_TCK)

WORK=$(mktemp -d)
PIDS=()
cleanup() {
  for p in "${PIDS[@]:-}"; do kill "$p" 2>/dev/null || true; done
  rm -rf "$WORK"
}
trap cleanup EXIT

# The rules: docs/bench/wrk-rules.yaml; the same with 998 rules this path does not match (the
# shapes of RequestDecisionBenchmark's); the same counted in two layers, synced every 200 ms.
RULES="$ROOT/docs/bench/wrk-rules.yaml"
RULES_1000="$WORK/rules-1000.yaml"
{
  cat "$RULES"
  for i in $(seq 0 997); do
    case $((i % 4)) in
      0) match="{ methods: [GET], path: \"/api/v1/r$i/{id}\" }" ;;
      1) match="{ prefix: /svc$i }" ;;
      2) match="{ methods: [POST], path: \"/api/v2/r$i/**\" }" ;;
      3) match="{ path: \"/t$i/*/items\" }" ;;
    esac
    echo "  - id: other-$i"
    echo "    match: $match"
    echo "    key: [header:X-Api-Key]"
    echo "    tiers: [ { limit: 1000000000, period: 1s } ]"
  done
} >"$RULES_1000"
RULES_TWO_LAYER="$WORK/rules-two-layer.yaml"
{
  echo "defaults:"
  echo "  sync: 200ms"
  cat "$RULES"
} >"$RULES_TWO_LAYER"

MC_PORT=$((PORT + 100))
MC_USER=()
[ "$(id -u)" -eq 0 ] && MC_USER=(-u root)
memcached -l 127.0.0.1 -p "$MC_PORT" -U 0 -m 256 -t 2 "${MC_USER[@]}" &
MC_PID=$!
PIDS+=("$MC_PID")
MC="127.0.0.1:$MC_PORT"
REDIS_PORT=$((PORT + 101))
redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save '' --appendonly no \
  --dir "$WORK" --logfile "$WORK/redis.log" &
REDIS_PID=$!
PIDS+=("$REDIS_PID")
REDIS="127.0.0.1:$REDIS_PORT"

# row name | group | port | command, or "shared" for a port of the group's one server
rows() {
  local g
  for g in $GROUPS_WANTED; do
    case $g in
      demo)
        echo "demo: Sluice off (rules: [])|demo|$PORT|java -jar $DEMO_JAR --port $PORT --rules $ROOT/docs/bench/off.yaml"
        echo "demo: in memory|demo|$((PORT + 1))|java -jar $DEMO_JAR --port $((PORT + 1)) --rules $RULES"
        echo "demo: in memory, 1,000 rules|demo|$((PORT + 2))|java -jar $DEMO_JAR --port $((PORT + 2)) --rules $RULES_1000"
        echo "demo: memcached|demo|$((PORT + 3))|java -jar $DEMO_JAR --port $((PORT + 3)) --rules $RULES --memcached $MC"
        echo "demo: two-layer (sync: 200ms) on memcached|demo|$((PORT + 4))|java -jar $DEMO_JAR --port $((PORT + 4)) --rules $RULES_TWO_LAYER --memcached $MC"
        echo "demo: redis|demo|$((PORT + 5))|java -jar $DEMO_JAR --port $((PORT + 5)) --rules $RULES --redis $REDIS"
        ;;
      grizzly)
        echo "Jersey on Grizzly: off|grizzly|$((PORT + 10))|shared"
        echo "Jersey on Grizzly: Sluice in memory|grizzly|$((PORT + 11))|shared"
        echo "Jersey on Grizzly: Bucket4j filter (peer)|grizzly|$((PORT + 12))|shared"
        echo "Jersey on Grizzly: header-only floor|grizzly|$((PORT + 13))|shared"
        echo "Jersey on Grizzly: off again (resolution)|grizzly|$((PORT + 14))|shared"
        ;;
      grizzly-memcached)
        echo "Jersey on Grizzly (second JVM): off|grizzly-memcached|$((PORT + 30))|shared"
        echo "Jersey on Grizzly: raw-incr floor (memcached)|grizzly-memcached|$((PORT + 31))|shared"
        echo "Jersey on Grizzly: Sluice on memcached|grizzly-memcached|$((PORT + 32))|shared"
        echo "Jersey on Grizzly (second JVM): off again (resolution)|grizzly-memcached|$((PORT + 33))|shared"
        ;;
      grizzly-redis)
        echo "Jersey on Grizzly (third JVM): off|grizzly-redis|$((PORT + 40))|shared"
        echo "Jersey on Grizzly: Redis floor (count.lua through Lettuce)|grizzly-redis|$((PORT + 41))|shared"
        echo "Jersey on Grizzly: Sluice on redis|grizzly-redis|$((PORT + 42))|shared"
        echo "Jersey on Grizzly (third JVM): off again (resolution)|grizzly-redis|$((PORT + 43))|shared"
        ;;
      tomcat)
        echo "servlet on Tomcat: off|tomcat|$((PORT + 20))|shared"
        echo "servlet on Tomcat: SluiceFilter in memory|tomcat|$((PORT + 21))|shared"
        echo "servlet on Tomcat: header-only floor|tomcat|$((PORT + 22))|shared"
        echo "servlet on Tomcat: off again (resolution)|tomcat|$((PORT + 23))|shared"
        ;;
      *) echo "unknown group: $g (demo, grizzly, grizzly-memcached, grizzly-redis, tomcat)" >&2; exit 2 ;;
    esac
  done
}

# The groups whose modes share one JVM (one port per mode): started once, warmed up once.
shared_server() {
  case $1 in
    grizzly) echo "java -cp $BENCH_JAR dev.sluice.bench.WrkServer --port $((PORT + 10)) --rules $RULES --modes off,sluice,bucket4j,headers,off" ;;
    grizzly-memcached) echo "java -cp $BENCH_JAR dev.sluice.bench.WrkServer --port $((PORT + 30)) --rules $RULES --memcached $MC --modes off,floor,sluice-memcached,off" ;;
    grizzly-redis) echo "java -cp $BENCH_JAR dev.sluice.bench.WrkServer --port $((PORT + 40)) --rules $RULES --redis $REDIS --modes off,floor-redis,sluice-redis,off" ;;
    tomcat) echo "java -cp $BENCH_JAR dev.sluice.bench.WrkServer --container tomcat --port $((PORT + 20)) --rules $RULES --modes off,sluice,headers,off" ;;
  esac
}
declare -A SERVER_PID

# CPU time of a process so far, in clock ticks (utime + stime: fields 14 and 15 of its stat; the
# command name, field 2, is in parentheses and may hold spaces, so count from after it)
cpu_ticks() {
  awk '{ sub(/^.*\) /, ""); print $12 + $13 }' "/proc/$1/stat"
}

# wrk's latency with its unit, in milliseconds
to_ms() {
  awk -v v="$1" 'BEGIN {
    n = v + 0; u = v; sub(/^[0-9.]+/, "", u)
    if (u == "us") n /= 1000; else if (u == "s") n *= 1000; else if (u == "m") n *= 60000
    printf "%.2f", n }'
}

await_port() {
  for _ in $(seq 200); do
    curl -s -o /dev/null -H 'X-Api-Key: probe' "http://127.0.0.1:$1/api/v1/report" && return
    sleep 0.2
  done
  echo "nothing answers on port $1" >&2
  exit 1
}

load() { # port duration [--latency]
  wrk -t"$THREADS" -c"$CONNECTIONS" -d"$2" ${3:-} -s "$ROOT/docs/bench/wrk-keys.lua" "http://127.0.0.1:$1"
}

# port pid store-pid -> "server-µs/request store-µs/request requests/s p99-ms non2xx"
run() {
  local port=$1 pid=$2 store=$3 s0 m0 s1 m1 out n bad
  s0=$(cpu_ticks "$pid")
  m0=$(cpu_ticks "$store")
  out=$(load "$port" "$DURATION" --latency)
  s1=$(cpu_ticks "$pid")
  m1=$(cpu_ticks "$store")
  n=$(echo "$out" | awk '/requests in/ {print $1}')
  bad=$(echo "$out" | awk '/Non-2xx/ {print $NF}')
  echo "$(awk -v a="$s0" -v b="$s1" -v n="$n" -v t="$TICK" 'BEGIN { printf "%.2f", (b - a) / t * 1e6 / n }')" \
    "$(awk -v a="$m0" -v b="$m1" -v n="$n" -v t="$TICK" 'BEGIN { printf "%.2f", (b - a) / t * 1e6 / n }')" \
    "$(echo "$out" | awk '/Requests\/sec/ {printf "%.0f", $2}')" \
    "$(to_ms "$(echo "$out" | awk '$1 == "99%" {print $2}')")" \
    "${bad:-0}"
}

measure() { # row's server pid, port, store's pid
  load "$2" 2s >/dev/null
  run "$2" "$1" "$3"
}

mapfile -t ROWS < <(rows | awk -F'|' -v re="${ONLY:-}" '$1 ~ re')
declare -A ROW_PID
start_row() { # port command
  $2 >>"$WORK/$1.log" 2>&1 &
  ROW_PID[$1]=$!
  PIDS+=($!)
}
warm_up() { # port
  await_port "$1"
  load "$1" "$WARMUP" >/dev/null
  until_jit_quiet "${ROW_PID[$1]}" load "$1" 5s
}
stop_row() { # port
  kill "${ROW_PID[$1]}" 2>/dev/null || true
  wait "${ROW_PID[$1]}" 2>/dev/null || true
}
for row in "${ROWS[@]}"; do
  IFS='|' read -r name group port cmd <<<"$row"
  if [ "$cmd" != shared ] && [ "$FRESH" = 0 ]; then
    start_row "$port" "$cmd"
  fi
done
for g in $GROUPS_WANTED; do
  cmd=$(shared_server "$g")
  [ -z "$cmd" ] && continue
  $cmd >"$WORK/$g.log" 2>&1 &
  SERVER_PID[$g]=$!
  PIDS+=($!)
done
echo "warming each server up for $WARMUP…" >&2
for row in "${ROWS[@]}"; do
  IFS='|' read -r name group port cmd <<<"$row"
  if [ "$cmd" = shared ]; then
    ROW_PID[$port]=${SERVER_PID[$group]}
  elif [ "$FRESH" != 0 ]; then
    continue
  fi
  warm_up "$port"
done

RESULTS="$WORK/results"
: >"$RESULTS"
for r in $(seq "$ROUNDS"); do
  order=("${!ROWS[@]}")
  if [ $((r % 2)) -eq 0 ]; then
    mapfile -t order < <(printf '%s\n' "${order[@]}" | sort -rn)
  fi
  for i in "${order[@]}"; do
    IFS='|' read -r name group port cmd <<<"${ROWS[$i]}"
    echo "round $r/$ROUNDS, row $((i + 1))/${#ROWS[@]}: $name…" >&2
    store_pid=$MC_PID
    [[ $name =~ [Rr]edis ]] && store_pid=$REDIS_PID
    fresh=$([ "$cmd" != shared ] && [ "$FRESH" != 0 ] && echo 1 || true)
    if [ -n "$fresh" ]; then
      start_row "$port" "$cmd"
      warm_up "$port"
    fi
    m=$(measure "${ROW_PID[$port]}" "$port" "$store_pid")
    [ -n "$fresh" ] && stop_row "$port"
    echo "  $m (server µs/request, store µs/request, requests/s, p99 ms, non-2xx)" >&2
    echo "$i|$group|$name|$m|$r" >>"$RESULTS"
  done
done

echo
echo "wrk -t$THREADS -c$CONNECTIONS -d$DURATION, $ROUNDS rounds, $(nproc) cores, $(date -u +%Y-%m-%d)$([ "$FRESH" != 0 ] && echo ", a fresh JVM per demo row and round")."
echo "CPU per request in µs: the server process's, the store's (memcached's or redis-server's). \"Over off\": the median over the"
echo "rounds of the row's CPU per request less its server's Sluice-off rows' (their mean) in the"
echo "same round; each round's in brackets."
echo
echo "| server | CPU µs/request | over off | store µs/request | requests/s | p99 | non-2xx |"
echo "|---|---:|---:|---:|---:|---:|---:|"
sort -t'|' -k1,1n -k5,5n "$RESULTS" | awk -F'|' '
  function median(list,   a, i, j, t, n) {
    n = split(list, a, " ")
    for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
  }
  {
    split($4, m, " ")
    i = ++lines; key[i] = $1; grp[i] = $2; rnd[i] = $5; cpu[i] = m[1]
    name[$1] = $3; c[$1] = c[$1] " " m[1]; mc[$1] = mc[$1] " " m[2]
    rps[$1] = rps[$1] " " m[3]; p99[$1] = p99[$1] " " m[4]; bad[$1] += m[5]
    if (!($1 in seen)) { order[++n] = $1; seen[$1] = 1 }
    if ($3 ~ /: off$|off again|Sluice off/) { base[$2, $5] += m[1]; bn[$2, $5]++ }
  }
  END {
    for (i = 1; i <= lines; i++) {
      g = grp[i]; o = rnd[i]
      d[key[i]] = d[key[i]] " " sprintf("%+.1f", cpu[i] - base[g, o] / bn[g, o])
    }
    for (k = 1; k <= n; k++) {
      x = order[k]
      uses = name[x] ~ /memcached|[Rr]edis/
      printf "| %s | %.1f | %+.1f [%s ] | %s | %.0f | %.2f ms | %d |\n", name[x], median(c[x]), median(d[x]), d[x], uses ? sprintf("%.1f", median(mc[x])) : "", median(rps[x]), median(p99[x]), bad[x]
    }
  }'
