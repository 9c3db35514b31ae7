#!/usr/bin/env bash
# Bolt side by side: the gateway, MOSN and HAProxy (mode tcp, L4) in front of one real bolt
# RpcServer, driven by sofaload, in one run on one machine, interleaved and repeated.
#
# Layout ("pinned", as in docs/perf/README.md): every proxy on CPU 0 (the gateway with one
# event loop, MOSN with GOMAXPROCS=1, HAProxy single-threaded); the load generator and the backend
# share CPU 1. Targets: direct (no proxy), gateway, mosn (when a binary is found), haproxy-l4 (when
# haproxy is installed), and on request gateway-uring (the same jar on the io_uring transport).
# Scenarios:
#   max      sofaload -c 8 -m 4 -t 2 for D s      -> req/s, p50/p99, proxy CPU µs/request, RSS
#   max500   sofaload -c 500 -t 2 for D s         -> the same over 500 client connections, one call in
#            flight on each: the load of the MOSN 0.2.1 report (500 connections from its load machines;
#            16 000-45 000 QPS at 15-23 ms RT, i.e. hundreds of calls in flight), which keeps the proxy
#            busier than 32 calls in flight can on this machine
#   rate2000 sofaload --qps 2000 -c 200 -t 2, D s -> the full latency distribution
#   sidecar  (--sidecar) client -> proxy -> proxy -> server, both proxies of a pair on CPU 0, max load
# Each (scenario, target) runs REPS times; the target order rotates every repetition. Every run
# records the proxy's CPU (utime+stime of its /proc/PID/stat), RSS, and "foreign" CPU (busy time of
# both CPUs minus our processes and the client): a run with more than MAX_FOREIGN % of a core foreign
# is marked clean=0 and repeated once. Optionally (--syscalls) one extra run per proxy under
# `perf stat` counts system calls per request.
#
# Writes OUT/runs.tsv, OUT/raw/*.txt (every load-generator report), OUT/meta.txt, then
# OUT/summary.md and OUT/chart.png (java -jar benchmarks.jar bolt-report OUT).
#
# Needs: the jars (./mvnw -B -q -pl gateway-bench -am package -DskipTests). Uses sofaload when it is
# on PATH (else the Java bolt-load, which shares CPU 1 with the backend and measures itself as much
# as the proxy), mosn when on PATH or given by MOSN=/path (never built or shipped by this repo).
# Ports: 12200 (gateway), 12201 (backend), 29902 (gateway admin), 12202/29903 (gateway-uring and its
# admin), 12203/29906 (gateway-base: another jar given with --base-jar, for an A/B of two builds in one run), 31301/31303 (MOSN), 31311
# (HAProxy), 12210/12211/31321/31331/31341 (sidecar pairs). Everything binds 127.0.0.1. Bounded in
# time; everything started here is stopped by PID on exit.
#
# usage: bolt-peers.sh [--out DIR] [--reps N] [-D SECS] [--scenarios "max max500 rate2000"] [--targets "gateway gateway-uring gateway-base mosn haproxy-l4"]
#                      [--warm SECS] [--sidecar] [--syscalls] [--gateway-jar JAR] [--base-jar JAR] [--quick] [--quiet-wait S] [--max-foreign PCT] [--retries N]
#                      [--backend-pool] [--proxy-cpu CPUS]
# --proxy-cpu puts the proxies on other CPUs than 0 (taskset list: "1" shares the load generator's and
# the backend's CPU, "0,1" leaves them unpinned); CPU accounting is per process and unaffected.
# The backend answers on its connections' I/O threads (bolt's processInIOThread; requests decoded
# together from one read still go to bolt's default executor as one batch), so that CPU 1 (load
# generator + backend) saturates later and the proxies are measured nearer their own limits;
# --backend-pool answers on bolt's business thread pool instead (bolt's default: a thread hand-off
# per request, about a quarter more backend CPU per request and a higher latency floor).
# Warm-up runs each scenario's own load shape (max, then the fixed rate over 200 connections, then
# 500 connections).
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$(pwd)
GW_JAR=$ROOT/gateway-server/target/sluice.jar
BENCH=${BENCH_JAR:-$ROOT/gateway-bench/target/benchmarks.jar}
OUT=/tmp/bolt-peers-$(date +%Y%m%d-%H%M%S)
REPS=3
D=10
WARM=20
SCENARIOS="max max500 rate2000"
TARGETS="gateway mosn haproxy-l4"
RETRIES=1
SIDECAR=0
SYSCALLS=0
MAX_FOREIGN=15
QUIET_WAIT=30
BACKEND_ARGS=--io-thread
PROXY_CPU=0
GW_JAVA_OPTS=${GW_JAVA_OPTS:-"-XX:ActiveProcessorCount=1 -Xms256m -Xmx256m -XX:+UseParallelGC"}
while [ $# -gt 0 ]; do
  case $1 in
    --out) OUT=$2; shift 2;;
    --reps) REPS=$2; shift 2;;
    -D) D=$2; shift 2;;
    --warm) WARM=$2; shift 2;;
    --scenarios) SCENARIOS=$2; shift 2;;
    --targets) TARGETS=${2//direct/}; shift 2;;
    --sidecar) SIDECAR=1; shift;;
    --quiet-wait) QUIET_WAIT=$2; shift 2;;
    --retries) RETRIES=$2; shift 2;;
    --max-foreign) MAX_FOREIGN=$2; shift 2;;
    --syscalls) SYSCALLS=1; shift;;
    --backend-pool) BACKEND_ARGS=; shift;;
    --proxy-cpu) PROXY_CPU=$2; shift 2;;
    --gateway-jar) GW_JAR=$(realpath "$2"); shift 2;;
    --base-jar) BASE_JAR=$(realpath "$2"); shift 2;;
    --quick) REPS=1; D=3; WARM=5; QUIET_WAIT=0; shift;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d'; exit 0;;
    *) echo "unknown option $1" >&2; exit 2;;
  esac
done
for sc in $SCENARIOS; do case $sc in max|max500|rate2000|sidecar) ;; *) echo "unknown scenario $sc (max max500 rate2000 sidecar)" >&2; exit 2;; esac; done
[[ $PROXY_CPU =~ ^[0-9][0-9,-]*$ ]] || { echo "bad --proxy-cpu $PROXY_CPU (a taskset CPU list: 0, 1, 0,1)" >&2; exit 2; }
[[ $REPS =~ ^[0-9]+$ && $D =~ ^[0-9]+$ && $WARM =~ ^[0-9]+$ && $WARM -le 300 && $D -le 120 && $REPS -le 10 ]] || { echo "bad --reps/-D/--warm" >&2; exit 2; }
[ "$SIDECAR" = 1 ] && SCENARIOS="$SCENARIOS sidecar"
mkdir -p "$OUT/raw" "$OUT/run"
OUT=$(realpath "$OUT")
RUN=$OUT/run
HZ=$(getconf CLK_TCK)

declare -A PID_OF=()
# shared helpers: log, start/stop by PID, ports, CPU accounting
# shellcheck source=lib/bench-common.sh
. "$ROOT/gateway-bench/scripts/lib/bench-common.sh"
trap cleanup EXIT

# ---- the load generator ------------------------------------------------------------------------
if command -v sofaload >/dev/null; then
  LOAD=(sofaload -p sofarpc); LOADER="sofaload ($(sofaload --version 2>&1 | head -1))"
else
  LOAD=(java -Xmx256m -jar "$BENCH" bolt-load); LOADER="bolt-load (sofaload not on PATH: the Java load generator competes with the backend for CPU 1)"
fi
log "load generator: $LOADER"
MOSN_BIN=${MOSN:-$(command -v mosn || true)}
if [ -z "$MOSN_BIN" ]; then log "mosn not on PATH (set MOSN=/path): MOSN left out"; TARGETS=${TARGETS//mosn/}; fi
if ! command -v haproxy >/dev/null; then log "haproxy not installed (apt-get install -y haproxy): HAProxy left out"; TARGETS=${TARGETS//haproxy-l4/}; fi

if [[ " $TARGETS " == *" gateway-base "* ]] && [ ! -f "${BASE_JAR:-}" ]; then
  echo "target gateway-base needs --base-jar JAR (the build to compare the gateway with)" >&2; exit 2
fi
for p in 12200 12201 12202 12203 29902 29903 29906 31301 31303 31311; do port_busy $p && { echo "port $p in use" >&2; exit 1; }; done


# ---- configs -----------------------------------------------------------------------------------
gw_config() { # file listen-port upstream-port admin-port [transport]
  cat >"$1" <<EOF
{
  "listeners": [
    { "name": "bolt", "protocol": "bolt", "address": "127.0.0.1", "port": $2,
      "routes": [{ "match": { "service": "com.alipay.test.TestService:1.0" }, "cluster": "backend" }] }
  ],
  "clusters": [ { "name": "backend", "protocol": "bolt", "hosts": ["127.0.0.1:$3"] } ],
  "admin": { "enabled": true, "port": $4 },
  "transport": { "worker_threads": 1, "type": "${5:-auto}" }
}
EOF
}
mosn_config() { # file listen-port upstream-port admin-port logdir: one bolt proxy listener, one cluster
  cat >"$1" <<EOF
{
  "disable_upgrade": true,
  "servers": [ {
    "default_log_path": "$5/mosn.log", "default_log_level": "ERROR", "processor": 1,
    "routers": [ { "router_config_name": "bolt_router", "virtual_hosts": [ { "name": "bolt_vh", "domains": ["*"],
      "routers": [ { "match": { "headers": [ { "name": "service", "value": "com.alipay.test.TestService:1.0" } ] },
                     "route": { "cluster_name": "bolt_backend" } } ] } ] } ],
    "listeners": [ { "name": "bolt_listener", "address": "127.0.0.1:$2", "bind_port": true,
      "filter_chains": [ { "filters": [ { "type": "proxy", "config": { "downstream_protocol": "bolt",
        "upstream_protocol": "bolt", "router_config_name": "bolt_router" } } ] } ] } ]
  } ],
  "cluster_manager": { "clusters": [ { "name": "bolt_backend", "type": "SIMPLE", "lb_type": "LB_ROUNDROBIN",
    "max_request_per_conn": 1024, "conn_buffer_limit_bytes": 32768, "hosts": [ { "address": "127.0.0.1:$3" } ] } ] },
  "admin": { "address": { "socket_address": { "address": "127.0.0.1", "port_value": $4 } } }
}
EOF
}
haproxy_config() { # file listen-port upstream-port
  cat >"$1" <<EOF
global
  nbthread 1
  maxconn 9000
defaults
  mode tcp
  timeout connect 2s
  timeout client 120s
  timeout server 120s
listen bolt
  bind 127.0.0.1:$2
  server s1 127.0.0.1:$3
EOF
}

# ---- the fleet ---------------------------------------------------------------------------------
start backend 1 java -Xms512m -Xmx512m -jar "$BENCH" bolt-server --port 12201 $BACKEND_ARGS
has() { [[ " $TARGETS " == *" $1 "* ]]; }
if has gateway; then
  gw_config "$RUN/gw.json" 12200 12201 29902
  start gateway "$PROXY_CPU" java $GW_JAVA_OPTS -jar "$GW_JAR" -c "$RUN/gw.json"
fi
if has gateway-uring; then
  gw_config "$RUN/gw-uring.json" 12202 12201 29903 io_uring
  start gateway-uring "$PROXY_CPU" java $GW_JAVA_OPTS -jar "$GW_JAR" -c "$RUN/gw-uring.json"
fi
if has gateway-base; then
  gw_config "$RUN/gw-base.json" 12203 12201 29906
  start gateway-base "$PROXY_CPU" java $GW_JAVA_OPTS -jar "$BASE_JAR" -c "$RUN/gw-base.json"
fi
if has mosn; then
  mkdir -p "$RUN/mosn/conf" "$RUN/mosn/logs"
  mosn_config "$RUN/mosn/conf/mosn.json" 31301 12201 31303 "$RUN/mosn/logs"
  start mosn "$PROXY_CPU" env GOMAXPROCS=1 "$MOSN_BIN" start -c "$RUN/mosn/conf/mosn.json"
fi
if has haproxy-l4; then
  haproxy_config "$RUN/haproxy.cfg" 31311 12201
  start haproxy-l4 "$PROXY_CPU" haproxy -db -f "$RUN/haproxy.cfg"
fi
if [[ " $SCENARIOS " == *" sidecar "* ]]; then
  # gateway pair: 12210 -> 12211 -> backend; mosn pair: 31321 -> 31331 -> backend
  gw_config "$RUN/gw-a.json" 12210 12211 29912; gw_config "$RUN/gw-b.json" 12211 12201 29913
  start gateway-a "$PROXY_CPU" java $GW_JAVA_OPTS -jar "$GW_JAR" -c "$RUN/gw-a.json"
  start gateway-b "$PROXY_CPU" java $GW_JAVA_OPTS -jar "$GW_JAR" -c "$RUN/gw-b.json"
  if [ -n "$MOSN_BIN" ]; then
    for x in a:31321:31331:31323 b:31331:12201:31333; do
      IFS=: read -r n l u a <<<"$x"; mkdir -p "$RUN/mosn-$n/conf" "$RUN/mosn-$n/logs"
      mosn_config "$RUN/mosn-$n/conf/mosn.json" "$l" "$u" "$a" "$RUN/mosn-$n/logs"
      start "mosn-$n" "$PROXY_CPU" env GOMAXPROCS=1 "$MOSN_BIN" start -c "$RUN/mosn-$n/conf/mosn.json"
    done
  fi
fi
port_of() { case $1 in direct) echo 12201;; gateway) echo 12200;; gateway-uring) echo 12202;; gateway-base) echo 12203;; mosn) echo 31301;; haproxy-l4) echo 31311;;
                        gateway-pair) echo 12210;; mosn-pair) echo 31321;; esac; }
pids_of() { case $1 in direct) echo "";; gateway-pair) echo "${PID_OF[gateway-a]} ${PID_OF[gateway-b]}";;
                       mosn-pair) echo "${PID_OF[mosn-a]:-} ${PID_OF[mosn-b]:-}";; *) echo "${PID_OF[$1]:-}";; esac; }
for t in direct $TARGETS; do wait_port "$(port_of "$t")" || true; done
if [[ " $SCENARIOS " == *" sidecar "* ]]; then
  SIDE_TARGETS="gateway-pair"; [ -n "${PID_OF[mosn-a]:-}" ] && SIDE_TARGETS="$SIDE_TARGETS mosn-pair"
  for t in $SIDE_TARGETS; do wait_port "$(port_of "$t")" || true; done
fi

# ---- CPU accounting ----------------------------------------------------------------------------

load_args() { # scenario
  case $1 in
    max|sidecar) echo "-D $D -c 8 -m 4 -t 2";;
    max500) echo "-D $D -c 500 -t 2";;
    rate2000) echo "-D $D --qps=2000 -c 200 -t 2";;
  esac
}
us() { # sofaload duration (123us, 1.23ms, 1.23s) -> microseconds
  awk -v v="$1" 'BEGIN { n = v + 0; if (v ~ /us$/) print int(n); else if (v ~ /ms$/) print int(n * 1000); else if (v ~ /s$/) print int(n * 1000000); else print "" }'
}

printf 'scenario\ttarget\trep\tattempt\trps\tsucceeded\tfailed\tp50_us\tp75_us\tp90_us\tp95_us\tp99_us\tmax_us\tproxy_ticks\tproxy_us_per_req\tproxy_cpu_pct\trss_kb\tclient_cpu_pct\tbackend_cpu_pct\tforeign_cpu_pct\twall_s\tclean\n' >"$OUT/runs.tsv"

measure() { # scenario target rep attempt -> one runs.tsv row; returns 1 when not clean
  local sc=$1 t=$2 rep=$3 att=$4 port pids b0 b1 p0 p1 k0 k1 o0 o1 t0 t1 out ct raw
  port=$(port_of "$t"); pids=$(pids_of "$t")
  raw="$OUT/raw/$sc-$t-rep$rep$( [ "$att" -gt 0 ] && echo "-retry$att").txt"
  b0=$(busy); p0=$(ticks $pids); k0=$(ticks "${PID_OF[backend]}"); o0=$(all_ours); t0=$(date +%s.%N)
  # sh reaps the load generator, then prints its cutime+cstime (= the generator's CPU ticks)
  timeout $(( D + 60 )) taskset -c 1 sh -c '"$@"; sed "s/^.*) //" /proc/$$/stat | awk "{print \"CLIENTTICKS \" \$14+\$15}"' \
      sh "${LOAD[@]}" $(load_args "$sc") "sofarpc://127.0.0.1:$port" >"$raw" 2>&1 || true
  t1=$(date +%s.%N); b1=$(busy); p1=$(ticks $pids); k1=$(ticks "${PID_OF[backend]}"); o1=$(all_ours)
  ct=$(awk '/^CLIENTTICKS/ {print $2}' "$raw"); ct=${ct:-0}
  local rps ok failed p50 p75 p90 p95 p99 mx rss
  rps=$(sed -n 's/^finished in [^,]*, \([0-9.]*\) req\/s.*/\1/p' "$raw" | head -1)
  ok=$(sed -n 's/.* \([0-9]*\) succeeded, \([0-9]*\) failed.*/\1/p' "$raw" | head -1)
  failed=$(sed -n 's/.* \([0-9]*\) succeeded, \([0-9]*\) failed.*/\2/p' "$raw" | head -1)
  pct() { us "$(awk -v p="$1%" '$1 == p {print $2; exit}' "$raw")"; }
  p50=$(pct 50); p75=$(pct 75); p90=$(pct 90); p95=$(pct 95); p99=$(pct 99)
  mx=$(us "$(awk '/^time for request:/ {print $5; exit}' "$raw")")
  rss=$( [ -n "$pids" ] && rss_kb $pids || echo 0)
  local row clean
  row=$(awk -v w0="$t0" -v w1="$t1" -v hz="$HZ" -v pt=$(( p1 - p0 )) -v kt=$(( k1 - k0 )) -v ot=$(( o1 - o0 )) -v ct="$ct" \
            -v bt=$(( b1 - b0 )) -v ok="${ok:-0}" -v mf="$MAX_FOREIGN" 'BEGIN { w = w1 - w0;
      f = 100 * (bt - ot - ct) / hz / w; if (f < 0) f = 0;
      printf "%d\t%.1f\t%.1f\t%d\t%.1f\t%.1f\t%.1f\t%.1f\t%d", pt, (ok > 0 ? pt * 1e6 / hz / ok : 0), 100 * pt / hz / w,
             0, 100 * ct / hz / w, 100 * kt / hz / w, f, w, (f <= mf) }')
  # the rss column goes in the middle: splice it
  IFS=$'\t' read -r c_pt c_us c_pct _ c_cl c_bk c_fo c_w clean <<<"$row"
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$sc" "$t" "$rep" "$att" \
      "${rps:-0}" "${ok:-0}" "${failed:-0}" "${p50:-}" "${p75:-}" "${p90:-}" "${p95:-}" "${p99:-}" "${mx:-}" \
      "$c_pt" "$c_us" "$c_pct" "$rss" "$c_cl" "$c_bk" "$c_fo" "$c_w" "$clean" >>"$OUT/runs.tsv"
  log "$(printf '%-8s %-12s rep%s  %9s req/s  p50 %6s us  p99 %6s us  failed %s  proxy %5s us/req (%s%% of a core)  rss %s kB  foreign %s%%%s' \
      "$sc" "$t" "$rep" "${rps:-0}" "${p50:-?}" "${p99:-?}" "${failed:-?}" "$c_us" "$c_pct" "$rss" "$c_fo" "$( [ "$clean" = 1 ] || echo '  NOISY')")"
  [ "$clean" = 1 ]
}

# ---- warm-up (JIT) -----------------------------------------------------------------------------
warm_targets="$TARGETS"; [[ " $SCENARIOS " == *" sidecar "* ]] && warm_targets="$warm_targets $SIDE_TARGETS"
for t in $warm_targets; do
  warm_cycles "$t" taskset -c 1 "${LOAD[@]}" $(D={}; load_args max) "sofarpc://127.0.0.1:$(port_of "$t")"
  # the fixed rate takes paths the saturated runs do not (200 connections opened and closed, a loop
  # that wakes for one request): without this its first repetition measured JIT compilation
  # (PrintCompilation: ~150 compilations and ~30 deoptimisations during it, a few per later one)
  # (and 500 connections take the same kind of paths at another scale)
  for sc in rate2000 max500; do
    if [[ " $SCENARIOS " == *" $sc "* && " $TARGETS " == *" $t "* ]]; then
      WARM=$(( WARM / 2 )) warm_cycles "$t-$sc" taskset -c 1 "${LOAD[@]}" $(D={}; load_args "$sc") "sofarpc://127.0.0.1:$(port_of "$t")"
    fi
  done
done

# ---- the matrix ----------------------------------------------------------------------------------
for rep in $(seq 1 "$REPS"); do
  for sc in $SCENARIOS; do
    if [ "$sc" = sidecar ]; then list="direct $SIDE_TARGETS"; else list="direct $TARGETS"; fi
    read -r -a arr <<<"$list"; n=${#arr[@]}
    for i in $(seq 0 $(( n - 1 ))); do
      t=${arr[$(( (i + rep - 1) % n ))]}
      quiet_gate
      att=0
      until measure "$sc" "$t" "$rep" "$att" || [ "$att" -ge "$RETRIES" ]; do att=$(( att + 1 )); quiet_gate; done
    done
  done
done

# ---- system calls per request (one extra, unmeasured-for-throughput run per proxy) --------------
if [ "$SYSCALLS" = 1 ]; then
  printf 'target\trequests\tsyscalls\tper_request\tread\twrite\treadv\twritev\tepoll_wait\tepoll_ctl\tfutex\tother\n' >"$OUT/syscalls.tsv"
  for t in $TARGETS; do
    [ "$t" = direct ] && continue
    pid=${PID_OF[$t]}
    [ "$t" = mosn ] && pid=$(pgrep -P "$pid" -x mosn || echo "$pid")   # env execs mosn: same pid
    raw="$OUT/raw/syscalls-$t.txt"
    timeout $(( D + 30 )) perf stat -x, -e 'raw_syscalls:sys_enter,syscalls:sys_enter_read,syscalls:sys_enter_write,syscalls:sys_enter_readv,syscalls:sys_enter_writev,syscalls:sys_enter_epoll_wait,syscalls:sys_enter_epoll_pwait,syscalls:sys_enter_epoll_pwait2,syscalls:sys_enter_epoll_ctl,syscalls:sys_enter_futex,syscalls:sys_enter_recvfrom,syscalls:sys_enter_sendto' \
        -p "$pid" -o "$raw.perf" -- sleep $(( D + 1 )) &
    perfpid=$!
    sleep 0.5
    timeout $(( D + 30 )) taskset -c 1 "${LOAD[@]}" -D "$D" -c 8 -m 4 -t 2 "sofarpc://127.0.0.1:$(port_of "$t")" >"$raw" 2>&1 || true
    wait "$perfpid" || true
    ok=$(sed -n 's/.* \([0-9]*\) succeeded, .*/\1/p' "$raw" | head -1)
    awk -F, -v t="$t" -v ok="${ok:-0}" '{ gsub(/ /, "", $1); v[$3] = $1 }
      END { tot = v["raw_syscalls:sys_enter"]; r = v["syscalls:sys_enter_read"] + v["syscalls:sys_enter_recvfrom"];
            w = v["syscalls:sys_enter_write"] + v["syscalls:sys_enter_sendto"]; e = v["syscalls:sys_enter_epoll_wait"] + v["syscalls:sys_enter_epoll_pwait"] + v["syscalls:sys_enter_epoll_pwait2"];
            c = v["syscalls:sys_enter_epoll_ctl"]; fx = v["syscalls:sys_enter_futex"];
            o = tot - r - w - v["syscalls:sys_enter_readv"] - v["syscalls:sys_enter_writev"] - e - c - fx;
            d = (ok > 0 ? ok : 1);
            printf "%s\t%d\t%d\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\n", t, ok, tot, tot / d, r / d, w / d,
                   v["syscalls:sys_enter_readv"] / d, v["syscalls:sys_enter_writev"] / d, e / d, c / d, fx / d, o / d }' "$raw.perf" >>"$OUT/syscalls.tsv"
    log "syscalls $t: $(tail -1 "$OUT/syscalls.tsv")"
  done
fi

{
  echo "date: $(date -u +%FT%TZ)"
  echo "host: $(nproc) CPUs, $(awk -F: '/model name/ {print $2; exit}' /proc/cpuinfo | sed 's/^ *//'), kernel $(uname -r)"
  echo "load generator: $LOADER"
  echo "gateway: $GW_JAR (sha256 $(sha256sum "$GW_JAR" | cut -c1-12), modified $(date -u -r "$GW_JAR" +%FT%TZ); worktree HEAD $(cd "$ROOT" && git rev-parse --short HEAD 2>/dev/null)), java $GW_JAVA_OPTS, $(java -version 2>&1 | head -1)"
  [[ " $TARGETS " == *" gateway-base "* ]] && echo "gateway-base: $BASE_JAR (sha256 $(sha256sum "$BASE_JAR" | cut -c1-12))"
  [ -n "$MOSN_BIN" ] && echo "mosn: $MOSN_BIN ($(timeout 5 "$MOSN_BIN" --version 2>/dev/null | grep -i 'version' | head -1 || true)), GOMAXPROCS=1"
  command -v haproxy >/dev/null && echo "haproxy: $(haproxy -v 2>/dev/null | head -1 | sed 's/ - http[^ ,]*//'), mode tcp, nbthread 1"
  echo "backend: bolt RpcServer (benchmarks.jar bolt-server $BACKEND_ARGS; $( [ -n "$BACKEND_ARGS" ] && echo "answers on its I/O threads" || echo "answers on bolt's business thread pool")) on CPU 1; proxies on CPU $PROXY_CPU"
  echo "scenarios: $SCENARIOS; reps $REPS; duration ${D}s; warm-up ${WARM}s per target; max foreign ${MAX_FOREIGN}% of a core"
  for sc in $SCENARIOS; do echo "  $sc: ${LOAD[*]} $(load_args "$sc") sofarpc://127.0.0.1:PORT"; done
} >"$OUT/meta.txt"
rm -rf "$RUN/mosn" "$RUN/mosn-a" "$RUN/mosn-b"
java -Djava.awt.headless=true -jar "$BENCH" bolt-report "$OUT" || log "WARN bolt-report failed"
log "results in $OUT"
