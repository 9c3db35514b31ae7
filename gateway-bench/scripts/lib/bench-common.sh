# Shared by the scenario scripts (bolt-peers.sh, http-peers.sh, bolt-bench.sh, bolt-profile.sh,
# long-connections.sh, metrics-overhead.sh, slow-start-demo.sh): logging, starting and stopping
# processes by PID, waiting for ports, CPU and RSS of processes, and CPU accounting (our processes
# vs "foreign" work). Callers declare the associative array PID_OF (name -> PID, each started in
# its own session) and `trap cleanup EXIT`; log needs OUT, start needs RUN, and the CPU accounting
# HZ (set here if unset), MAX_FOREIGN and QUIET_WAIT.

: "${HZ:=$(getconf CLK_TCK)}"

log() { echo "[$(date +%H:%M:%S)] $*" | tee -a "$OUT/log.txt" >&2; }

cleanup() {
  for n in "${!PID_OF[@]}"; do kill -TERM -- "-${PID_OF[$n]}" 2>/dev/null || kill "${PID_OF[$n]}" 2>/dev/null || true; done
  sleep 1
  for n in "${!PID_OF[@]}"; do kill -KILL -- "-${PID_OF[$n]}" 2>/dev/null || true; done
}

port_busy() { ss -Hltn "sport = :$1" | grep -q .; }

start() { # name cpu cmd...   (own session: $! is the process and its group; cpu "-": not pinned; output: RUN/name.log)
  local name=$1 cpu=$2; shift 2
  if [ "$cpu" = - ]; then
    setsid "$@" >"$RUN/$name.log" 2>&1 &
  else
    setsid taskset -c "$cpu" "$@" >"$RUN/$name.log" 2>&1 &
  fi
  PID_OF[$name]=$!
}

wait_port() { for _ in $(seq 150); do port_busy "$1" && return 0; sleep 0.2; done; log "WARN nothing listens on $1"; return 1; }

ticks() {
  local sum=0 p s c
  for p in "$@"; do
    [ -r "/proc/$p/stat" ] || continue
    s=$(sed 's/^.*) //' "/proc/$p/stat" 2>/dev/null) || continue
    set -- $s; sum=$(( sum + ${12} + ${13} ))
    for c in $(cat /proc/"$p"/task/*/children 2>/dev/null); do sum=$(( sum + $(ticks "$c") )); done
  done
  echo $sum
}

all_ours() { ticks "${PID_OF[@]}"; }

# CPU time (utime + stime, in clock ticks: divide by HZ) of one process, its threads included.
proc_ticks() { sed 's/^.*) //' "/proc/$1/stat" | awk '{print $12 + $13}'; }

# The given PIDs and all their descendants, one per line.
proc_tree() { local p c; for p in "$@"; do echo "$p"; for c in $(cat /proc/"$p"/task/*/children 2>/dev/null); do proc_tree "$c"; done; done; }

# Resident memory in kB: of the given processes (rss_kb), or of them and their descendants (rss_tree_kb).
rss_kb() { local s=0 p; for p in "$@"; do s=$(( s + $(awk '/^VmRSS/ {print $2}' "/proc/$p/status" 2>/dev/null || echo 0) )); done; echo $s; }
rss_tree_kb() { rss_kb $(proc_tree "$@"); }

busy() { awk '/^cpu0 |^cpu1 / { b += $2+$3+$4+$7+$8+$9 } END { print b }' /proc/stat; }

foreign_pct() {
  local b0 o0 b1 o1 t0 t1; o0=$(all_ours); t0=$(date +%s%N); b0=$(busy); sleep "$1"; b1=$(busy); t1=$(date +%s%N); o1=$(all_ours)
  echo $(( ( (b1 - b0) - (o1 - o0) ) * 100 * 1000000000 / HZ / (t1 - t0) ))
}

quiet_gate() {
  local waited=0 f
  while :; do
    f=$(foreign_pct 1)
    [ "$f" -le "$MAX_FOREIGN" ] && return 0
    [ "$waited" -ge "$QUIET_WAIT" ] && { log "host busy (foreign ${f}% of a core) after ${waited}s; measuring anyway"; return 0; }
    [ "$waited" = 0 ] && log "host busy (foreign ${f}% of a core); waiting up to ${QUIET_WAIT}s"
    sleep 1; waited=$(( waited + 2 ))
  done
}

# Warm-up: WARM seconds of load in cycles of at most 10 s, each on fresh connections and followed
# by 5 s of quiet. C2 compiles branches it has not seen taken (accept, close, an event loop waking
# with nothing to do, another client's requests) as traps that discard the whole inlined event
# loop when first taken; the cycles take them before the measured runs, not in the first of them
# (docs/operations.md#jvm-options). Warm up with the measured runs' own client.
# usage: warm_cycles LABEL CMD...   ("{}" in CMD is the cycle's seconds; output: OUT/raw/warmup-LABEL.txt)
warm_cycles() {
  local label=$1 n=$(( (WARM + 9) / 10 )) c s; shift
  [ "$n" -gt 0 ] || return 0
  s=$(( WARM / n ))
  log "warm-up $label (${WARM}s in $n cycles, 5 s quiet after each)"
  : >"$OUT/raw/warmup-$label.txt"
  for c in $(seq "$n"); do
    timeout $(( s + 30 )) "${@//\{\}/$s}" >>"$OUT/raw/warmup-$label.txt" 2>&1 || true
    sleep 5
  done
}

# Steady warm-up: after the cycles, one run of WARM_LONG seconds on the same connections. A
# gateway arms one timer per connection (idle, request-head and response deadlines; the first
# fires 10 s after the connection opens) and runs periodic work (the upstream pool's idle sweep,
# the rotation of metric windows). Fresh 10-s cycles never take those paths; their first firing
# inside a measured run discards compiled code that inlined the event loop, and C2 recompiling on
# the proxy's own core preempts the event loop for 1-4 ms at a time (perf sched on CPU 0), which is
# what a p99 measures. A gateway in service has long passed that point.
# usage: warm_long LABEL CMD...   ("{}" in CMD is the run's seconds; output: OUT/raw/warmup-LABEL-long.txt)
warm_long() {
  local label=$1; shift
  [ "${WARM_LONG:-0}" -gt 0 ] || return 0
  log "warm-up $label: ${WARM_LONG}s on the same connections"
  timeout $(( WARM_LONG + 30 )) "${@//\{\}/$WARM_LONG}" >"$OUT/raw/warmup-$label-long.txt" 2>&1 || true
  sleep 5
}
