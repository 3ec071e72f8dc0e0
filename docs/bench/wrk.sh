#!/usr/bin/env bash
# What Sluice costs on a real server, measured with wrk: the same server with Sluice off and on,
# in one run, several rounds interleaved. Every limited request is allowed under three counters
# (two tiers per API key and one per address), 1,000 API keys in turn.
#
#   docs/bench/wrk.sh                 # every row, 3 rounds of 10 s (about 12 minutes)
#   ROUNDS=1 DURATION=5s docs/bench/wrk.sh demo   # one group: demo, grizzly or tomcat
#
# Rows: the demo (Jersey on Grizzly) off, in memory and on memcached; a bare Jersey server off,
# with Sluice in memory, with Bucket4j (a JAX-RS filter over a bucket per key), with the memcached
# floor (the same three incrs sent straight through spymemcached in one round trip) and with
# Sluice on memcached; Tomcat with a plain servlet, off and behind SluiceFilter. memcached runs on
# the same machine. Prints a Markdown table; the ratio is to the same server with Sluice off.
set -euo pipefail

ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-10s}
WARMUP=${WARMUP:-5s}
CONNECTIONS=${CONNECTIONS:-16}
THREADS=${THREADS:-1}
PORT=${PORT:-18080}
GROUPS_WANTED=${*:-demo grizzly tomcat}

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

cat >"$WORK/off.yaml" <<'EOF'
rules: []
EOF
cat >"$WORK/on.yaml" <<'EOF'
rules:
  - id: per-key
    match: { prefix: /api }
    key: [header:X-Api-Key]
    tiers: [ { limit: 100000000, period: 1m }, { limit: 10000000, period: 1s } ]
  - id: per-ip
    match: { prefix: /api }
    key: [ip]
    tiers: [ { limit: 1000000000, period: 1m } ]
EOF
cat >"$WORK/keys.lua" <<'EOF'
-- 1,000 API keys in turn; a response other than 200 is counted by wrk as non-2xx
local i = 0
request = function()
  i = (i + 1) % 1000
  return wrk.format("GET", "/api/v1/report", { ["X-Api-Key"] = "key-" .. i })
end
EOF

MC_PORT=$((PORT + 100))
MC_USER=()
[ "$(id -u)" -eq 0 ] && MC_USER=(-u root)
memcached -l 127.0.0.1 -p "$MC_PORT" -U 0 -m 256 -t 2 "${MC_USER[@]}" &
PIDS+=($!)
MC="127.0.0.1:$MC_PORT"

# row name | server group | command
rows() {
  local g
  for g in $GROUPS_WANTED; do
    case $g in
      demo)
        echo "demo: Sluice off (rules: [])|demo|java -jar $DEMO_JAR --port $PORT --rules $WORK/off.yaml"
        echo "demo: Sluice in memory|demo|java -jar $DEMO_JAR --port $PORT --rules $WORK/on.yaml"
        echo "demo: Sluice on memcached|demo|java -jar $DEMO_JAR --port $PORT --rules $WORK/on.yaml --memcached $MC"
        ;;
      grizzly)
        local s="java -cp $BENCH_JAR dev.sluice.bench.WrkServer --port $PORT"
        echo "Jersey on Grizzly: off|grizzly|$s --mode off"
        echo "Jersey on Grizzly: Sluice in memory|grizzly|$s --mode sluice --rules $WORK/on.yaml"
        echo "Jersey on Grizzly: Bucket4j filter (peer)|grizzly|$s --mode bucket4j"
        echo "Jersey on Grizzly: memcached floor (3 raw incrs)|grizzly|$s --mode floor --memcached $MC"
        echo "Jersey on Grizzly: Sluice on memcached|grizzly|$s --mode sluice --rules $WORK/on.yaml --memcached $MC"
        ;;
      tomcat)
        local t="java -cp $BENCH_JAR dev.sluice.bench.WrkServer --container tomcat --port $PORT"
        echo "servlet on Tomcat: off|tomcat|$t --mode off"
        echo "servlet on Tomcat: SluiceFilter in memory|tomcat|$t --mode sluice --rules $WORK/on.yaml"
        echo "servlet on Tomcat: SluiceFilter on memcached|tomcat|$t --mode sluice --rules $WORK/on.yaml --memcached $MC"
        ;;
      *) echo "unknown group: $g (demo, grizzly, tomcat)" >&2; exit 2 ;;
    esac
  done
}

# wrk's latency with its unit, in milliseconds
to_ms() {
  awk -v v="$1" 'BEGIN {
    n = v + 0; u = v; sub(/^[0-9.]+/, "", u)
    if (u == "us") n /= 1000; else if (u == "s") n *= 1000; else if (u == "m") n *= 60000
    printf "%.2f", n }'
}

measure() { # command -> "rps p50 p99 non2xx"
  local cmd=$1 pid out rps p50 p99 bad
  $cmd >"$WORK/server.log" 2>&1 &
  pid=$!
  PIDS+=("$pid")
  for _ in $(seq 150); do
    curl -s -o /dev/null -H 'X-Api-Key: probe' "http://127.0.0.1:$PORT/api/v1/report" && break
    sleep 0.2
  done
  wrk -t"$THREADS" -c"$CONNECTIONS" -d"$WARMUP" -s "$WORK/keys.lua" "http://127.0.0.1:$PORT" >/dev/null
  out=$(wrk -t"$THREADS" -c"$CONNECTIONS" -d"$DURATION" --latency -s "$WORK/keys.lua" "http://127.0.0.1:$PORT")
  kill "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  rps=$(echo "$out" | awk '/Requests\/sec/ {print $2}')
  p50=$(to_ms "$(echo "$out" | awk '$1 == "50%" {print $2}')")
  p99=$(to_ms "$(echo "$out" | awk '$1 == "99%" {print $2}')")
  bad=$(echo "$out" | awk '/Non-2xx/ {print $NF}')
  echo "$rps $p50 $p99 ${bad:-0}"
}

mapfile -t ROWS < <(rows)
RESULTS="$WORK/results"
: >"$RESULTS"
for r in $(seq "$ROUNDS"); do
  for i in "${!ROWS[@]}"; do
    IFS='|' read -r name group cmd <<<"${ROWS[$i]}"
    echo "round $r/$ROUNDS, row $((i + 1))/${#ROWS[@]}: $name…" >&2
    m=$(measure "$cmd")
    echo "  $m (requests/s, p50 ms, p99 ms, non-2xx)" >&2
    echo "$i|$group|$name|$m|$r" >>"$RESULTS"
  done
done

echo
echo "wrk -t$THREADS -c$CONNECTIONS -d$DURATION, $ROUNDS rounds, $(nproc) cores, $(date -u +%Y-%m-%d)."
echo "Medians over the rounds; a ratio is taken within each round (the row against its server's"
echo "first row, Sluice off, measured minutes apart at most), then its median; each round's"
echo "requests/s in brackets."
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
    key = $1; round = $5; name[key] = $3; g = $2
    if (!(g in first)) first[g] = key
    if (first[g] == key) { offr[g, round] = m[1]; offl[g, round] = m[3] }
    rps[key] = rps[key] " " sprintf("%.0f", m[1]); p50[key] = p50[key] " " m[2]; p99[key] = p99[key] " " m[3]
    rr[key] = rr[key] " " m[1] / offr[g, round]; lr[key] = lr[key] " " m[3] / offl[g, round]
    bad[key] += m[4]; if (!(key in seen)) { order[++n] = key; seen[key] = 1 }
  }
  END {
    for (k = 1; k <= n; k++) {
      key = order[k]
      printf "| %s | %.0f [%s ] | %.2f ms | %.2f ms | %.2f | %.2f | %d |\n", name[key], median(rps[key]), rps[key], median(p50[key]), median(p99[key]), median(rr[key]), median(lr[key]), bad[key]
    }
  }'
