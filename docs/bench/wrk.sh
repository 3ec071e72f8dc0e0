#!/usr/bin/env bash
# What Sluice costs on a real server, measured with wrk: the same server with Sluice off and on,
# in one run, several rounds interleaved. Every limited request is allowed under three counters
# (two tiers per API key and one per address), 1,000 API keys in turn.
#
#   docs/bench/wrk.sh                 # every row, 3 rounds of 10 s (about 15 minutes)
#   ROUNDS=1 DURATION=5s docs/bench/wrk.sh demo   # one group: demo, grizzly, grizzly-memcached,
#                                                  # tomcat or tomcat-memcached
#
# Rows: the demo (Jersey on Grizzly) off, in memory and on memcached, each its own JVM. A bare
# Jersey server in one JVM, one port per mode (so JIT luck is shared): off, Sluice in memory, the
# Bucket4j peer (a JAX-RS filter over a bucket per key, writing the same headers), the filter floor
# (a request and a response filter that write the same headers with fixed values and count
# nothing), and off again. The same server in a second JVM: off, the memcached floor (the same
# three incrs sent straight through spymemcached in one round trip), Sluice on memcached, off
# again. Tomcat with a plain servlet, off, behind SluiceFilter, behind the filter floor (a servlet
# filter that sets the same headers), off again; on memcached, off, SluiceFilter, off again.
# "Off again" is the same server as the first row: its ratio is how far apart two identical
# servers measure, the resolution of the run. A JVM holds one store, as an application does.
# memcached runs on the same machine. Rounds alternate their order (forwards, then backwards) so
# a drift in the machine's speed favours no row. Prints a Markdown table; the ratio is to the same
# JVM's server with Sluice off, measured in the same round.
set -euo pipefail

ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-10s}
WARMUP=${WARMUP:-5s}
CONNECTIONS=${CONNECTIONS:-16}
THREADS=${THREADS:-1}
PORT=${PORT:-18080}
GROUPS_WANTED=${*:-demo grizzly grizzly-memcached tomcat tomcat-memcached}

cd "$(dirname "$0")/../.."
ROOT=$(pwd)

need() {
  command -v "$1" >/dev/null 2>&1 && return
  echo "installing $1 (Debian's package)" >&2
  local sudo=""
  [ "$(id -u)" -ne 0 ] && sudo=sudo
  $sudo apt-get update -qq && $sudo apt-get install -y -qq "$1" >/dev/null
}
need wrk
need memcached
need curl

echo "building the demo and the benchmark server…" >&2
mvn -q -B -ntp -pl example,jmh -am install -DskipTests >&2
DEMO_JAR="$ROOT/example/target/sluice-example.jar"
BENCH_JAR="$ROOT/jmh/target/benchmarks.jar"

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

# row name | group | port | command, or "shared" for a port of the group's one server
rows() {
  local g
  for g in $GROUPS_WANTED; do
    case $g in
      demo)
        echo "demo: Sluice off (rules: [])|demo|$PORT|java -jar $DEMO_JAR --port $PORT --rules $ROOT/docs/bench/off.yaml"
        echo "demo: Sluice in memory|demo|$PORT|java -jar $DEMO_JAR --port $PORT --rules $ROOT/docs/bench/wrk-rules.yaml"
        echo "demo: Sluice on memcached|demo|$PORT|java -jar $DEMO_JAR --port $PORT --rules $ROOT/docs/bench/wrk-rules.yaml --memcached $MC"
        ;;
      grizzly)
        echo "Jersey on Grizzly: off|grizzly|$((PORT + 10))|shared"
        echo "Jersey on Grizzly: Sluice in memory|grizzly|$((PORT + 11))|shared"
        echo "Jersey on Grizzly: Bucket4j filter (peer)|grizzly|$((PORT + 12))|shared"
        echo "Jersey on Grizzly: filter floor (headers only)|grizzly|$((PORT + 13))|shared"
        echo "Jersey on Grizzly: off again (resolution)|grizzly|$((PORT + 14))|shared"
        ;;
      grizzly-memcached)
        echo "Jersey on Grizzly (second JVM): off|grizzly-memcached|$((PORT + 30))|shared"
        echo "Jersey on Grizzly: memcached floor (3 raw incrs)|grizzly-memcached|$((PORT + 31))|shared"
        echo "Jersey on Grizzly: Sluice on memcached|grizzly-memcached|$((PORT + 32))|shared"
        echo "Jersey on Grizzly (second JVM): off again (resolution)|grizzly-memcached|$((PORT + 33))|shared"
        ;;
      tomcat)
        echo "servlet on Tomcat: off|tomcat|$((PORT + 20))|shared"
        echo "servlet on Tomcat: SluiceFilter in memory|tomcat|$((PORT + 21))|shared"
        echo "servlet on Tomcat: filter floor (headers only)|tomcat|$((PORT + 22))|shared"
        echo "servlet on Tomcat: off again (resolution)|tomcat|$((PORT + 23))|shared"
        ;;
      tomcat-memcached)
        echo "servlet on Tomcat (second JVM): off|tomcat-memcached|$((PORT + 40))|shared"
        echo "servlet on Tomcat: SluiceFilter on memcached|tomcat-memcached|$((PORT + 41))|shared"
        echo "servlet on Tomcat (second JVM): off again (resolution)|tomcat-memcached|$((PORT + 42))|shared"
        ;;
      *) echo "unknown group: $g (demo, grizzly, grizzly-memcached, tomcat, tomcat-memcached)" >&2; exit 2 ;;
    esac
  done
}

# The groups whose servers share one JVM (one port per mode): started once, warmed up once.
shared_server() {
  local group=$1
  case $group in
    grizzly) echo "java -cp $BENCH_JAR dev.sluice.bench.WrkServer --port $((PORT + 10)) --rules $ROOT/docs/bench/wrk-rules.yaml --modes off,sluice,bucket4j,headers,off" ;;
    grizzly-memcached) echo "java -cp $BENCH_JAR dev.sluice.bench.WrkServer --port $((PORT + 30)) --rules $ROOT/docs/bench/wrk-rules.yaml --memcached $MC --modes off,floor,sluice-memcached,off" ;;
    tomcat) echo "java -cp $BENCH_JAR dev.sluice.bench.WrkServer --container tomcat --port $((PORT + 20)) --rules $ROOT/docs/bench/wrk-rules.yaml --modes off,sluice,headers,off" ;;
    tomcat-memcached) echo "java -cp $BENCH_JAR dev.sluice.bench.WrkServer --container tomcat --port $((PORT + 40)) --rules $ROOT/docs/bench/wrk-rules.yaml --memcached $MC --modes off,sluice-memcached,off" ;;
  esac
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

result() { # wrk output -> "rps p50 p99 non2xx"
  local out=$1 bad
  bad=$(echo "$out" | awk '/Non-2xx/ {print $NF}')
  echo "$(echo "$out" | awk '/Requests\/sec/ {print $2}')" \
    "$(to_ms "$(echo "$out" | awk '$1 == "50%" {print $2}')")" \
    "$(to_ms "$(echo "$out" | awk '$1 == "99%" {print $2}')")" "${bad:-0}"
}

measure() { # port command-or-shared -> "rps p50 p99 non2xx"
  local port=$1 cmd=$2 pid out
  if [ "$cmd" = shared ]; then
    load "$port" 2s >/dev/null
    result "$(load "$port" "$DURATION" --latency)"
    return
  fi
  $cmd >"$WORK/server.log" 2>&1 &
  pid=$!
  PIDS+=("$pid")
  await_port "$port"
  load "$port" "$WARMUP" >/dev/null
  out=$(load "$port" "$DURATION" --latency)
  kill "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  result "$out"
}

mapfile -t ROWS < <(rows)
for g in $GROUPS_WANTED; do
  cmd=$(shared_server "$g")
  [ -z "$cmd" ] && continue
  echo "starting the $g servers (one JVM) and warming each up for $WARMUP…" >&2
  $cmd >"$WORK/$g.log" 2>&1 &
  PIDS+=($!)
  for row in "${ROWS[@]}"; do
    IFS='|' read -r name group port cmd <<<"$row"
    if [ "$group" = "$g" ]; then
      await_port "$port"
      load "$port" "$WARMUP" >/dev/null
    fi
  done
done

RESULTS="$WORK/results"
: >"$RESULTS"
for r in $(seq "$ROUNDS"); do
  order=("${!ROWS[@]}")
  if [ $((r % 2)) -eq 0 ]; then
    order=($(printf '%s\n' "${order[@]}" | sort -rn))
  fi
  for i in "${order[@]}"; do
    IFS='|' read -r name group port cmd <<<"${ROWS[$i]}"
    echo "round $r/$ROUNDS, row $((i + 1))/${#ROWS[@]}: $name…" >&2
    m=$(measure "$port" "$cmd")
    echo "  $m (requests/s, p50 ms, p99 ms, non-2xx)" >&2
    echo "$i|$group|$name|$m|$r" >>"$RESULTS"
  done
done

echo
echo "wrk -t$THREADS -c$CONNECTIONS -d$DURATION, $ROUNDS rounds, $(nproc) cores, $(date -u +%Y-%m-%d)."
echo "Medians over the rounds; a ratio is taken within each round, against the mean of the"
echo "server's Sluice-off rows in that round (off and off again: the same server twice), then its"
echo "median; each round's requests/s in brackets. The off-again row's ratio shows how far two"
echo "identical servers measure apart, the run's resolution."
echo
echo "| server | requests/s | p50 | p99 | × off, requests/s | × off, p99 | non-2xx |"
echo "|---|---:|---:|---:|---:|---:|---:|"
sort -t'|' -k1,1n -k5,5n "$RESULTS" | awk -F'|' '
  function median(list,   a, i, j, t, n) {
    n = split(list, a, " ")
    for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
  }
  {
    split($4, m, " ")
    i = ++lines; key[i] = $1; grp[i] = $2; rnd[i] = $5; r[i] = m[1]; l[i] = m[3]
    name[$1] = $3; p50[$1] = p50[$1] " " m[2]; p99[$1] = p99[$1] " " m[3]
    rps[$1] = rps[$1] " " sprintf("%.0f", m[1]); bad[$1] += m[4]
    if (!($1 in seen)) { order[++n] = $1; seen[$1] = 1 }
    if ($3 ~ /: off$|off again|Sluice off/) { br[$2, $5] += m[1]; bl[$2, $5] += m[3]; bn[$2, $5]++ }
  }
  END {
    for (i = 1; i <= lines; i++) {
      g = grp[i]; o = rnd[i]
      rr[key[i]] = rr[key[i]] " " r[i] * bn[g, o] / br[g, o]
      lr[key[i]] = lr[key[i]] " " l[i] * bn[g, o] / bl[g, o]
    }
    for (k = 1; k <= n; k++) {
      x = order[k]
      printf "| %s | %.0f [%s ] | %.2f ms | %.2f ms | %.2f | %.2f | %d |\n", name[x], median(rps[x]), rps[x], median(p50[x]), median(p99[x]), median(rr[x]), median(lr[x]), bad[x]
    }
  }'
