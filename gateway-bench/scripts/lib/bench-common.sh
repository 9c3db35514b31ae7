# Shared by the scenario scripts (bolt-peers.sh, http-peers.sh, https-peers.sh, h2-peers.sh,
# ws-peers.sh, ratelimit-cost.sh, tls-upstream.sh, cold-start.sh, bolt-bench.sh, bolt-profile.sh,
# long-connections.sh, metrics-overhead.sh, slow-start-demo.sh): logging, installing a missing tool,
# starting and stopping processes by PID, waiting for ports, CPU and RSS of processes, and CPU
# accounting (our processes vs "foreign" work). Callers declare the associative array PID_OF (name ->
# PID, each started in its own session) and `trap cleanup EXIT`; log needs OUT, start needs RUN, and
# the CPU accounting HZ (set here if unset), MAX_FOREIGN and QUIET_WAIT.

: "${HZ:=$(getconf CLK_TCK)}"

log() { echo "[$(date +%H:%M:%S)] $*" | tee -a "$OUT/log.txt" >&2; }

cleanup() {
  for n in "${!PID_OF[@]}"; do kill -TERM -- "-${PID_OF[$n]}" 2>/dev/null || kill "${PID_OF[$n]}" 2>/dev/null || true; done
  sleep 1
  for n in "${!PID_OF[@]}"; do kill -KILL -- "-${PID_OF[$n]}" 2>/dev/null || true; done
}

port_busy() { ss -Hltn "sport = :$1" | grep -q .; }

# Exits (1) when one of the given ports already has a listener: a run never shares its ports.
require_free_ports() { local p; for p in "$@"; do port_busy "$p" && { echo "port $p in use" >&2; exit 1; }; done; return 0; }

# command package: true when the command exists, else installs Debian's package when root with apt-get
need_pkg() {
  command -v "$1" >/dev/null && return 0
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    log "installing $2 (for $1)"; DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$2" >/dev/null 2>&1 || true
  fi
  command -v "$1" >/dev/null
}

start() { # name cpu cmd...   (own session: $! is the process and its group; cpu "-": not pinned; output: RUN/name.log)
  local name=$1 cpu=$2; shift 2
  if [ "$cpu" = - ]; then
    setsid "$@" >"$RUN/$name.log" 2>&1 &
  else
    setsid taskset -c "$cpu" "$@" >"$RUN/$name.log" 2>&1 &
  fi
  PID_OF[$name]=$!
}

# Stops one process started by `start` (its whole session): TERM, up to 50 waits of STEP seconds (0.1)
# for it to go, then KILL; forgets its PID.
stop() { local p=${PID_OF[$1]:-} step=${2:-0.1}; [ -n "$p" ] || return 0; kill -TERM -- "-$p" 2>/dev/null || true
         for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep "$step"; done; kill -KILL -- "-$p" 2>/dev/null || true; unset "PID_OF[$1]"; }

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

# Peak RSS of a process tree while a command runs: rss_sampler_start PIDS ... rss_sampler_stop (prints
# the peak in kB; 0 without PIDs). Samples every 0.2 s into RUN/rss-samples.
rss_sampler_start() {
  RSS_SAMPLER=""; [ $# -gt 0 ] || return 0
  ( while :; do rss_tree_kb "$@"; sleep 0.2; done ) >"$RUN/rss-samples" 2>/dev/null & RSS_SAMPLER=$!
}
rss_sampler_stop() {
  [ -n "${RSS_SAMPLER:-}" ] || { echo 0; return 0; }
  kill "$RSS_SAMPLER" 2>/dev/null; wait "$RSS_SAMPLER" 2>/dev/null || true; RSS_SAMPLER=""
  sort -n "$RUN/rss-samples" | tail -1
}

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

# ---- small shared pieces of the scenario scripts ---------------------------------------------------

# A body of SIZE bytes of the character CHAR (for nginx `return 200 "..."` and request bodies).
body() { head -c "$1" /dev/zero | tr '\0' "$2"; }

# nginx temp paths under RUN with PREFIX, so several nginx instances of one run never share them.
nginx_temp_paths() { echo "client_body_temp_path $RUN/$1_body; proxy_temp_path $RUN/$1_proxy; fastcgi_temp_path $RUN/$1_fcgi;
  uwsgi_temp_path $RUN/$1_uwsgi; scgi_temp_path $RUN/$1_scgi;"; }

# wrk / sofaload / h2load durations (812us, 1.25ms, 2.1s) -> whole microseconds ("" when not one).
to_us() { awk -v v="$1" 'BEGIN { n = v + 0; if (v ~ /us$/) print int(n); else if (v ~ /ms$/) print int(n * 1000);
                                  else if (v ~ /s$/) print int(n * 1000000); else print "" }'; }

# The first lines of every meta.txt: when and on what.
meta_host() {
  echo "date: $(date -u +%FT%TZ)"
  echo "host: $(nproc) CPUs, $(awk -F: '/model name/ {print $2; exit}' /proc/cpuinfo | sed 's/^ *//'), kernel $(uname -r)"
}

# The target of position I in repetition REP of a rotating order over the words of LIST.
rotated() { local i=$1 rep=$2 arr; read -r -a arr <<<"$3"; echo "${arr[$(( (i + rep - 1) % ${#arr[@]} ))]}"; }

# Runs CMD... on CPU list CPUS and appends "CLIENTTICKS n" (the command's own CPU ticks, as its
# parent shell reaped it) to its output: the load generator's CPU, for the foreign-CPU accounting.
run_counted() { # cpus cmd...
  local cpus=$1; shift
  taskset -c "$cpus" sh -c '"$@"; sed "s/^.*) //" /proc/$$/stat | awk "{print \"CLIENTTICKS \" \$14+\$15}"' sh "$@"
}
