#!/usr/bin/env bash
# HTTP/1.1 side by side: the gateway, nginx and HAProxy as reverse proxies in front of the same
# backends, in one run on one machine, interleaved and repeated; the original reports' scenarios.
#
# Layout ("pinned", see docs/perf/README.md): every proxy on CPU 0 with one worker (the gateway
# with one event loop, nginx with 1 worker, HAProxy with 1 thread); the load generator and the
# backend nginx share CPU 1. Backends: one nginx (1 worker) on 127.0.0.1:18080-18084, bodies /128,
# /256, /1k served from memory. Scenarios:
#   percore   wrk -t1 -c64 and -c512, 1 KiB, D s      -> req/s, percentiles, proxy CPU µs/request, RSS
#   rate2000  http-load -R 2000 -c 200, D s (open loop) -> the latency distribution at a fixed rate
#   churn     ab -c 1500 -n N without keep-alive, 128 B and 256 B, three backends (the HAProxy report)
#   scaleout  wrk -c256 over 1..5 backends, proxies unpinned (the OpenResty report)
#   sidecar   client -> proxy -> proxy -> backend, both proxies of a pair on CPU 0 (the MOSN 0.2.1
#             report's sidecar layout): wrk -t1 -c64, 1 KiB; CPU per request is the pair's together
# Each (scenario, target) runs REPS times, rotating the order. Every run records the proxy's CPU
# (utime+stime of /proc/PID/stat), its peak RSS (sampled), and "foreign" CPU (busy time of both CPUs
# minus our processes and the client): a run with more than MAX_FOREIGN % of a core foreign is
# marked clean=0 and repeated once.
#
# Writes OUT/runs.tsv (the columns of bolt-peers.sh), OUT/raw/*.txt, OUT/meta.txt, then OUT/summary.md
# and OUT/chart.png (java -jar benchmarks.jar perf-report --baseline nginx OUT).
#
# Needs the jars (./mvnw -B -q -pl gateway-bench -am package -DskipTests). Installs Debian's wrk, ab
# (apache2-utils), nginx and HAProxy when missing and apt-get works; leaves out what it cannot find.
# Targets: gateway (epoll), nginx, haproxy, and on request gateway-uring (the same jar on the io_uring
# transport) and gateway-base (another jar, given with --base-jar, on epoll: an A/B of two builds in one
# interleaved run, e.g. the last release against the working tree)
# transport).
# Ports: 18080-18084 (backends), 29080/29081 (gateway epoll/io_uring), 29901/29904 (their admin), 28080
# (nginx), 28081 (HAProxy); sidecar pairs: 29180/29190 (gateways, admin 29911/29912), 28180/28190
# (nginx), 28181/28191 (HAProxy).
# Everything binds 127.0.0.1, is bounded in time, and is stopped by PID on exit.
#
# Gateway pool: the clusters use the DEFAULT pool settings (no idle cap, idle_timeout 4 s), as a user
# gets them; --gw-pool JSON sets the cluster's "pool" object instead, e.g. the override these runs used
# before issue #23 item 8: --gw-pool '{ "max_idle_per_host": 2048, "idle_timeout": "300s" }'.
#
# Warm-up: --warm SECS of load per target, in cycles of at most 10 s on fresh connections with 5 s
# of quiet after each (warm_cycles in lib/bench-common.sh), with wrk (or http-load) at 64 connections,
# then half as long at 512 when percore is measured; when churn is measured, as many seconds again
# with ab -c 1500 without keep-alive; last, --warm-long SECS (30) of the 64-connection load on the
# same connections, so per-connection timers and periodic work have run (warm_long in
# lib/bench-common.sh: their first firing in a measured run showed up in the gateway's p99).
# usage: http-peers.sh [--out DIR] [--reps N] [-D SECS] [--warm SECS] [--warm-long SECS] [--scenarios "percore rate2000 churn scaleout sidecar"]
#                      [--targets "gateway gateway-uring gateway-base nginx haproxy"] [--churn-n N] [--gateway-jar JAR]
#                      [--base-jar JAR] [--quick]
#                      [--quiet-wait S] [--max-foreign PCT] [--gw-pool JSON]
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$(pwd)
GW_JAR=$ROOT/gateway-server/target/sluice.jar
BENCH=${BENCH_JAR:-$ROOT/gateway-bench/target/benchmarks.jar}
OUT=/tmp/http-peers-$(date +%Y%m%d-%H%M%S)
REPS=3
D=10
WARM=20
WARM_LONG=30
SCENARIOS="percore rate2000 churn"
TARGETS="gateway nginx haproxy"
CHURN_N=100000
MAX_FOREIGN=15
QUIET_WAIT=30
GW_POOL=""
GW_JAVA_OPTS=${GW_JAVA_OPTS:-"-XX:ActiveProcessorCount=1 -Xms256m -Xmx256m -XX:+UseParallelGC"}
while [ $# -gt 0 ]; do
  case $1 in
    --out) OUT=$2; shift 2;;
    --reps) REPS=$2; shift 2;;
    -D) D=$2; shift 2;;
    --warm) WARM=$2; shift 2;;
    --warm-long) WARM_LONG=$2; shift 2;;
    --scenarios) SCENARIOS=$2; shift 2;;
    --targets) TARGETS=${2//direct/}; shift 2;;
    --churn-n) CHURN_N=$2; shift 2;;
    --gateway-jar) GW_JAR=$(realpath "$2"); shift 2;;
    --base-jar) BASE_JAR=$(realpath "$2"); shift 2;;
    --quiet-wait) QUIET_WAIT=$2; shift 2;;
    --max-foreign) MAX_FOREIGN=$2; shift 2;;
    --gw-pool) GW_POOL=$2; shift 2;;
    --quick) REPS=1; D=3; WARM=5; WARM_LONG=0; QUIET_WAIT=0; CHURN_N=5000; shift;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d'; exit 0;;
    *) echo "unknown option $1" >&2; exit 2;;
  esac
done
[[ $REPS =~ ^[0-9]+$ && $D =~ ^[0-9]+$ && $WARM =~ ^[0-9]+$ && $WARM -le 300 && $WARM_LONG =~ ^[0-9]+$ && $WARM_LONG -le 300 && $D -le 120 && $REPS -le 10 && $CHURN_N =~ ^[0-9]+$ ]] || { echo "bad --reps/-D/--warm/--warm-long/--churn-n" >&2; exit 2; }
mkdir -p "$OUT/raw" "$OUT/run"
OUT=$(realpath "$OUT")
RUN=$OUT/run
HZ=$(getconf CLK_TCK)
declare -A PID_OF=()
# shared helpers: log, start/stop by PID, ports, CPU accounting
# shellcheck source=lib/bench-common.sh
. "$ROOT/gateway-bench/scripts/lib/bench-common.sh"

# ---- tools (need_pkg: lib/bench-common.sh) ------------------------------------------------------
if [[ " $TARGETS " == *" gateway-base "* ]] && [ ! -f "${BASE_JAR:-}" ]; then
  echo "target gateway-base needs --base-jar JAR (the build to compare the gateway with)" >&2; exit 2
fi
need_pkg nginx nginx-light || { echo "nginx is needed for the backends (apt-get install -y nginx-light)" >&2; exit 1; }
need_pkg wrk wrk || log "wrk not available: percore/scaleout use the Java http-load"
need_pkg ab apache2-utils || { log "ab not available: churn left out"; SCENARIOS=${SCENARIOS//churn/}; }
need_pkg haproxy haproxy || { log "haproxy not available: HAProxy left out"; TARGETS=${TARGETS//haproxy/}; }
[ -f "$GW_JAR" ] && [ -f "$BENCH" ] || { echo "build first: ./mvnw -B -q -pl gateway-bench -am package -DskipTests" >&2; exit 1; }

require_free_ports 18080 18081 18082 18083 18084 29080 29081 29082 29901 29904 29905 28080 28081 29180 29190 29911 29912 28180 28190 28181 28191

trap cleanup EXIT

# ---- configs (body, nginx_temp_paths: lib/bench-common.sh) ---------------------------------------
backend_config() {
  cat >"$RUN/backend.conf" <<EOF
worker_processes 1;
daemon off;
pid $RUN/backend.pid;
error_log $RUN/backend.err warn;
worker_rlimit_nofile 16384;
events { worker_connections 8192; use epoll; }
http {
  access_log off;
  $(nginx_temp_paths b)
  keepalive_requests 10000000; keepalive_timeout 300s; server_tokens off;
  default_type application/octet-stream;
  server {
    listen 127.0.0.1:18080 backlog=4096; listen 127.0.0.1:18081 backlog=4096; listen 127.0.0.1:18082 backlog=4096;
    listen 127.0.0.1:18083 backlog=4096; listen 127.0.0.1:18084 backlog=4096;
    location = /1k  { return 200 "$(body 1024 a)"; }
    location = /256 { return 200 "$(body 256 c)"; }
    location = /128 { return 200 "$(body 128 b)"; }
    location /      { return 200 "$(body 128 b)"; }
  }
}
EOF
}
hosts_json() { local n=$1 b=${2:-18080} s="" i; for i in $(seq 0 $(( n - 1 ))); do s="$s${s:+, }\"127.0.0.1:$(( b + i ))\""; done; echo "$s"; }
gw_config() { # backends workers [file port admin-port transport first-backend-port]
  cat >"${3:-$RUN/gw.json}" <<EOF
{
  "listeners": [ { "name": "bench", "address": "127.0.0.1", "port": ${4:-29080}, "routes": [{ "cluster": "backends" }],
                   "http": { "x_forwarded": false } } ],
  "clusters": [ { "name": "backends", "lb": "round_robin", "hosts": [$(hosts_json "$1" "${7:-18080}")]${GW_POOL:+,
                  \"pool\": $GW_POOL} } ],
  "admin": { "enabled": true, "port": ${5:-29901} },
  "transport": { "worker_threads": $2, "type": "${6:-auto}" }
}
EOF
}
nginx_config() { # backends workers [name listen-port first-backend-port]
  local i n=${3:-nginx} up=""; for i in $(seq 0 $(( $1 - 1 ))); do up="$up    server 127.0.0.1:$(( ${5:-18080} + i ));"$'\n'; done
  cat >"$RUN/$n.conf" <<EOF
worker_processes $2;
daemon off;
pid $RUN/$n.pid;
error_log $RUN/$n.err warn;
worker_rlimit_nofile 16384;
events { worker_connections 8192; use epoll; }
http {
  access_log off;
  $(nginx_temp_paths "$n")
  keepalive_requests 10000000; keepalive_timeout 300s; server_tokens off;
  upstream backends {
$up    keepalive 1024; keepalive_requests 10000000; keepalive_timeout 300s;
  }
  server {
    listen 127.0.0.1:${4:-28080} backlog=4096;
    location / { proxy_pass http://backends; proxy_http_version 1.1; proxy_set_header Connection ""; }
  }
}
EOF
}
haproxy_config() { # backends threads [name listen-port first-backend-port]
  local i srv=""; for i in $(seq 0 $(( $1 - 1 ))); do srv="$srv    server s$i 127.0.0.1:$(( ${5:-18080} + i ))"$'\n'; done
  cat >"$RUN/${3:-haproxy}.cfg" <<EOF
global
    nbthread $2
    maxconn 8000
defaults
    mode http
    option http-keep-alive
    http-reuse always
    timeout connect 5s
    timeout client 60s
    timeout server 60s
    timeout http-keep-alive 60s
    maxconn 8000
frontend fe
    bind 127.0.0.1:${4:-28081} backlog 4096
    default_backend be
backend be
    balance roundrobin
$srv
EOF
}
port_of() { case $1 in direct) echo 18080;; gateway) echo 29080;; gateway-uring) echo 29081;; gateway-base) echo 29082;; nginx) echo 28080;; haproxy) echo 28081;;
                       gateway-pair) echo 29180;; nginx-pair) echo 28180;; haproxy-pair) echo 28181;; esac; }

# ---- sidecar pairs: client -> A -> B -> backend 18080, both on CPU 0 -----------------------------
sidecar_configs() { # the same configs as the single proxies, chained: A listens, forwards to B
  gw_config 1 1 "$RUN/gw-side-a.json" 29180 29911 auto 29190; gw_config 1 1 "$RUN/gw-side-b.json" 29190 29912 auto 18080
  nginx_config 1 1 nginx-side-a 28180 28190; nginx_config 1 1 nginx-side-b 28190 18080
  haproxy_config 1 1 haproxy-side-a 28181 28191; haproxy_config 1 1 haproxy-side-b 28191 18080
}
start_sidecars() { # sets SIDE_TARGETS: a pair per proxy in TARGETS
  local n t; SIDE_TARGETS=""
  sidecar_configs
  if [[ " $TARGETS " == *" gateway "* ]]; then
    for n in a b; do start "gateway-side-$n" 0 java $GW_JAVA_OPTS -jar "$GW_JAR" -c "$RUN/gw-side-$n.json"; done
    PID_OF[gateway-pair]="${PID_OF[gateway-side-a]} ${PID_OF[gateway-side-b]}"; SIDE_TARGETS="$SIDE_TARGETS gateway-pair"
  fi
  if [[ " $TARGETS " == *" nginx "* ]]; then
    for n in a b; do start "nginx-side-$n" 0 nginx -c "$RUN/nginx-side-$n.conf" -p "$RUN"; done
    PID_OF[nginx-pair]="${PID_OF[nginx-side-a]} ${PID_OF[nginx-side-b]}"; SIDE_TARGETS="$SIDE_TARGETS nginx-pair"
  fi
  if [[ " $TARGETS " == *" haproxy "* ]]; then
    for n in a b; do start "haproxy-side-$n" 0 haproxy -db -f "$RUN/haproxy-side-$n.cfg"; done
    PID_OF[haproxy-pair]="${PID_OF[haproxy-side-a]} ${PID_OF[haproxy-side-b]}"; SIDE_TARGETS="$SIDE_TARGETS haproxy-pair"
  fi
  for t in $SIDE_TARGETS; do wait_port "$(port_of "$t")" || true; done
}
stop_sidecars() { local t n; for t in gateway nginx haproxy; do for n in a b; do stop "$t-side-$n"; done; unset "PID_OF[$t-pair]"; done; }

start_proxies() { # backends cpu workers
  has() { [[ " $TARGETS " == *" $1 "* ]]; }
  if has gateway; then gw_config "$1" "$3"; start gateway "$2" java $GW_JAVA_OPTS -jar "$GW_JAR" -c "$RUN/gw.json"; fi
  if has gateway-uring; then
    gw_config "$1" "$3" "$RUN/gw-uring.json" 29081 29904 io_uring
    start gateway-uring "$2" java $GW_JAVA_OPTS -jar "$GW_JAR" -c "$RUN/gw-uring.json"
  fi
  if has gateway-base; then
    gw_config "$1" "$3" "$RUN/gw-base.json" 29082 29905 auto
    start gateway-base "$2" java $GW_JAVA_OPTS -jar "$BASE_JAR" -c "$RUN/gw-base.json"
  fi
  if has nginx; then nginx_config "$1" "$3"; start nginx "$2" nginx -c "$RUN/nginx.conf" -p "$RUN"; fi
  if has haproxy; then haproxy_config "$1" "$3"; start haproxy "$2" haproxy -db -f "$RUN/haproxy.cfg"; fi
  for t in $TARGETS; do wait_port "$(port_of "$t")" || true; done
}
stop_proxies() { for t in gateway gateway-uring gateway-base nginx haproxy; do stop "$t"; done; }

# ---- load generators and their reports (to_us: lib/bench-common.sh) -----------------------------
load_cmd() { # scenario port -> the client command
  local url="http://127.0.0.1:$2"
  case $1 in
    percore64|percore512)
      if command -v wrk >/dev/null; then echo "wrk -t1 -c${1#percore} -d${D}s --latency $url/1k"
      else echo "java -Xmx256m -jar $BENCH http-load -t 1 -c ${1#percore} -d ${D}s $url/1k"; fi;;
    rate2000) echo "java -Xmx256m -jar $BENCH http-load -t 1 -c 200 -R 2000 -w 3s -d ${D}s $url/1k";;
    sidecar)
      if command -v wrk >/dev/null; then echo "wrk -t1 -c64 -d${D}s --latency $url/1k"
      else echo "java -Xmx256m -jar $BENCH http-load -t 1 -c 64 -d ${D}s $url/1k"; fi;;
    churn128|churn256) echo "ab -q -r -c 1500 -n $CHURN_N $url/${1#churn}";;
    scaleout*)
      if command -v wrk >/dev/null; then echo "wrk -t1 -c256 -d${D}s --latency $url/1k"
      else echo "java -Xmx256m -jar $BENCH http-load -t 1 -c 256 -d ${D}s $url/1k"; fi;;
  esac
}
parse() { # raw -> "rps ok failed p50 p75 p90 p95 p99 max" (microseconds)
  local raw=$1
  if grep -q '^Requests per second' "$raw"; then # ab
    awk '/^Requests per second/ {rps=$4} /^Complete requests/ {done=$3} /^Failed requests/ {f=$3}
         /^Non-2xx responses/ {n=$3} $1 ~ /^[0-9]+%$/ {p[$1]=$2*1000}
         END { printf "%s %d %d %s %s %s %s %s %s\n", rps, done - f - n, f + n, p["50%"], p["75%"], p["90%"], p["95%"], p["99%"], p["100%"] }' "$raw"
  else # wrk or http-load
    local rps reqs errs p50 p75 p90 p99 mx
    rps=$(awk '/^Requests\/sec/ {print $2}' "$raw")
    reqs=$(awk '/requests in/ {print $1; exit}' "$raw")
    errs=$(awk '/Socket errors/ {gsub(/,/, ""); e += $4 + $6 + $8 + $10} /Non-2xx/ {e += $5} END {print e + 0}' "$raw")
    pc() { to_us "$(awk -v p="$1%" '$1 == p {print $2; exit}' "$raw")"; }
    p50=$(pc 50); p75=$(pc 75); p90=$(pc 90); p99=$(pc 99); mx=$(pc 100)
    [ -z "$mx" ] && mx=$(to_us "$(awk '/Latency/ && NF >= 4 {print $4; exit}' "$raw")")
    echo "${rps:-0} $(( ${reqs:-0} - errs )) $errs ${p50:-} ${p75:-} ${p90:-} - ${p99:-} ${mx:-}"
  fi
}

printf 'scenario\ttarget\trep\tattempt\trps\tsucceeded\tfailed\tp50_us\tp75_us\tp90_us\tp95_us\tp99_us\tmax_us\tproxy_ticks\tproxy_us_per_req\tproxy_cpu_pct\trss_kb\tclient_cpu_pct\tbackend_cpu_pct\tforeign_cpu_pct\twall_s\tclean\n' >"$OUT/runs.tsv"

measure() { # scenario target rep attempt clientcpu
  local sc=$1 t=$2 rep=$3 att=$4 ccpu=$5 pids="" raw b0 b1 p0 p1 k0 k1 o0 o1 t0 t1 peak=0
  [ "$t" != direct ] && pids=${PID_OF[$t]}
  raw="$OUT/raw/$sc-$t-rep$rep$( [ "$att" -gt 0 ] && echo "-retry$att").txt"
  rss_sampler_start $pids
  b0=$(busy); p0=$(ticks $pids); k0=$(ticks "${PID_OF[backend]}"); o0=$(all_ours); t0=$(date +%s.%N)
  run_counted "$ccpu" timeout $(( D + 300 )) $(load_cmd "$sc" "$(port_of "$t")") >"$raw" 2>&1 || true
  t1=$(date +%s.%N); b1=$(busy); p1=$(ticks $pids); k1=$(ticks "${PID_OF[backend]}"); o1=$(all_ours)
  peak=$(rss_sampler_stop)
  local ct; ct=$(awk '/^CLIENTTICKS/ {print $2}' "$raw"); ct=${ct:-0}
  read -r rps ok failed p50 p75 p90 p95 p99 mx <<<"$(parse "$raw")"
  local row c_pt c_us c_pct c_cl c_bk c_fo c_w clean
  row=$(awk -v w0="$t0" -v w1="$t1" -v hz="$HZ" -v pt=$(( p1 - p0 )) -v kt=$(( k1 - k0 )) -v ot=$(( o1 - o0 )) -v ct="$ct" \
            -v bt=$(( b1 - b0 )) -v ok="${ok:-0}" -v mf="$MAX_FOREIGN" 'BEGIN { w = w1 - w0;
      f = 100 * (bt - ot - ct) / hz / w; if (f < 0) f = 0;
      printf "%d\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t%d", pt, (ok > 0 ? pt * 1e6 / hz / ok : 0), 100 * pt / hz / w,
             100 * ct / hz / w, 100 * kt / hz / w, f, w, (f <= mf) }')
  IFS=$'\t' read -r c_pt c_us c_pct c_cl c_bk c_fo c_w clean <<<"$row"
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$sc" "$t" "$rep" "$att" \
      "${rps:-0}" "${ok:-0}" "${failed:-0}" "${p50:-}" "${p75:-}" "${p90:-}" "${p95/#-/}" "${p99:-}" "${mx:-}" \
      "$c_pt" "$c_us" "$c_pct" "${peak:-0}" "$c_cl" "$c_bk" "$c_fo" "$c_w" "$clean" >>"$OUT/runs.tsv"
  log "$(printf '%-10s %-8s rep%s %9s req/s  p50 %7s us  p99 %7s us  failed %s  proxy %5s us/req (%s%%)  peak rss %s kB  foreign %s%%%s' \
      "$sc" "$t" "$rep" "${rps:-0}" "${p50:-?}" "${p99:-?}" "${failed:-?}" "$c_us" "$c_pct" "${peak:-0}" "$c_fo" "$( [ "$clean" = 1 ] || echo '  NOISY')")"
  [ "$clean" = 1 ]
}

matrix() { # "scenarios" "targets" clientcpu
  local rep sc i n t att
  for rep in $(seq 1 "$REPS"); do
    for sc in $1; do
      n=$(wc -w <<<"$2")
      for i in $(seq 0 $(( n - 1 ))); do
        t=$(rotated "$i" "$rep" "$2")
        quiet_gate
        att=0
        until measure "$sc" "$t" "$rep" "$att" "$3" || [ "$att" -ge 1 ]; do att=$(( att + 1 )); quiet_gate; done
      done
    done
  done
}
warm() { # targets client-cpu: the percore64 client (wrk where installed), and ab when churn is measured
  local t; for t in $1; do [ "$t" = direct ] && continue
    warm_cycles "$t" taskset -c "$2" $(D={}; load_cmd percore64 "$(port_of "$t")")
    # 512 connections: without this the first percore512 repetition of the gateway measured its
    # JIT catching up (p99 114 ms against 26-28 ms in the next two, 36 µs per request against 30-31)
    if [[ " $SCENARIOS " == *" percore "* ]]; then
      WARM=$(( WARM / 2 )) warm_cycles "$t-512" taskset -c "$2" $(D={}; load_cmd percore512 "$(port_of "$t")")
    fi
    # churn takes paths keep-alive never does (accept, close after the response, HTTP/1.0 heads)
    if [[ " $SCENARIOS " == *" churn "* ]]; then
      warm_cycles "$t-churn" taskset -c "$2" ab -q -r -c 1500 -t {} -n 100000000 "http://127.0.0.1:$(port_of "$t")/128"
    fi
    # last, steady keep-alive long enough for per-connection timers and periodic work to run
    warm_long "$t" taskset -c "$2" $(D={}; load_cmd percore64 "$(port_of "$t")")
  done; }

ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
backend_config
start backend 1 nginx -c "$RUN/backend.conf" -p "$RUN"
wait_port 18080

pinned=""; for sc in $SCENARIOS; do case $sc in
  percore) pinned="$pinned percore64 percore512";; rate2000) pinned="$pinned rate2000";; churn) pinned="$pinned churn128 churn256";; esac; done
if [ -n "$pinned" ]; then
  start_proxies 3 0 1
  warm "$TARGETS" 1
  list="$TARGETS"; [[ " $SCENARIOS " == *" percore "* || " $SCENARIOS " == *" rate2000 "* ]] && list="direct $TARGETS"
  for sc in $pinned; do
    if [[ $sc == churn* ]]; then matrix "$sc" "$TARGETS" 1; else matrix "$sc" "$list" 1; fi
  done
  stop_proxies
fi
if [[ " $SCENARIOS " == *" scaleout "* ]]; then
  TARGETS_SAVED=$TARGETS; TARGETS=$(echo "$TARGETS" | sed 's/haproxy//; s/gateway-uring//')
  for nb in 1 2 3 4 5; do
    start_proxies "$nb" 0-1 2
    warm "$TARGETS" 0-1
    matrix "scaleout$nb" "$TARGETS" 0-1
    stop_proxies
  done
  TARGETS=$TARGETS_SAVED
fi

if [[ " $SCENARIOS " == *" sidecar "* ]]; then
  start_sidecars
  warm "$SIDE_TARGETS" 1
  matrix sidecar "direct $SIDE_TARGETS" 1
  stop_sidecars
fi

{
  meta_host
  echo "gateway: $GW_JAR ($(cd "$ROOT" && git rev-parse --short HEAD 2>/dev/null)$(cd "$ROOT" && git diff --quiet 2>/dev/null || echo '+dirty')), java $GW_JAVA_OPTS, $(java -version 2>&1 | head -1)"
  [[ " $TARGETS " == *" gateway-base "* ]] && echo "gateway-base: $BASE_JAR ($(sha256sum "$BASE_JAR" | cut -c1-12))"
  echo "nginx: $(nginx -v 2>&1 | head -1), 1 worker, upstream keepalive 1024"
  command -v haproxy >/dev/null && echo "haproxy: $(haproxy -v 2>/dev/null | head -1 | sed 's/ - http[^ ,]*//'), 1 thread, http-reuse always"
  command -v wrk >/dev/null && echo "wrk: $(wrk -v 2>&1 | head -1)"
  command -v ab >/dev/null && echo "ab: $(ab -V 2>&1 | head -1)"
  echo "backend: nginx, 1 worker, CPU 1; pinned scenarios: proxies on CPU 0, client on CPU 1; scaleout: unpinned, 2 workers"
  echo "scenarios: $SCENARIOS; reps $REPS; duration ${D}s; warm-up ${WARM}s per target then ${WARM_LONG}s steady; max foreign ${MAX_FOREIGN}% of a core"
  for sc in $pinned; do echo "  $sc: $(load_cmd "$sc" PORT)"; done
  [[ " $SCENARIOS " == *" sidecar "* ]] && echo "  sidecar: $(load_cmd sidecar PORT) through a pair of the same proxy, both on CPU 0 (CPU per request: the pair's)"
  [[ " $SCENARIOS " == *" scaleout "* ]] && echo "  scaleoutN: $(load_cmd scaleout1 PORT) over N backends"
} >"$OUT/meta.txt"
java -Djava.awt.headless=true -jar "$BENCH" perf-report --baseline nginx "$OUT" || log "WARN perf-report failed"
log "results in $OUT"
