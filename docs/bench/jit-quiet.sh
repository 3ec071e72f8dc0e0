# Sourced by the CPU-per-request scripts (cost.sh, thread-cost.sh, reactive.sh). A fixed warm-up
# is not enough on a slow machine: the JIT may still be compiling a minute later, and its threads'
# CPU then counts in every request's (the demo's C2 threads took 50-65 µs a request 25 s into the
# load on a slow two-core machine, and went quiet 60-90 s in). After the fixed warm-up each server
# is loaded in runs of 5 s until its JVM makes fewer than JIT_QUIET compilations in one (jstat
# -compiler), for at most JIT_MAX more seconds.
JIT_QUIET=${JIT_QUIET:-20}
JIT_MAX=${JIT_MAX:-180}

# how many compilations PID's JVM made, or nothing when jstat cannot read it
jit_compiled() { { jstat -compiler "$1" 2>/dev/null || true; } | awk 'NR == 2 { print $1 }'; }

# until_jit_quiet PID COMMAND...: runs COMMAND (a run of load) until PID's JIT is quiet
until_jit_quiet() {
  local pid=$1 start=$SECONDS before after
  shift
  command -v jstat >/dev/null || { echo "  no jstat: the fixed warm-up only" >&2; return 0; }
  after=$(jit_compiled "$pid")
  [[ $after =~ ^[0-9]+$ ]] || { echo "  jstat cannot read $pid: the fixed warm-up only" >&2; return 0; }
  while [ $((SECONDS - start)) -lt "$JIT_MAX" ]; do
    before=$after
    "$@" >/dev/null
    after=$(jit_compiled "$pid")
    [[ $after =~ ^[0-9]+$ ]] || { echo "  jstat cannot read $pid any more" >&2; return 0; }
    if [ $((after - before)) -lt "$JIT_QUIET" ]; then
      echo "  JIT quiet after $((SECONDS - start)) s more ($((after - before)) compiled in the last run)" >&2
      return 0
    fi
  done
  echo "  JIT still compiling after $JIT_MAX s more ($((after - before)) in the last run)" >&2
}
