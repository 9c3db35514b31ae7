#!/usr/bin/env bash
# HTTP/2 (h2c) side by side: the gateway, HAProxy, nginx and MOSN as h2c reverse proxies in front of the
# same backend nginx, the MOSN 0.2.1 HTTP/2 scenario (h2load -c5 -m100, 1 KiB request and response) and a
# many-connections one (-c64 -m10), interleaved and repeated; and the seed report's sidecar layout
# (client -> proxy -> proxy -> server) for the gateway, HAProxy and MOSN.
#
# Layout ("pinned", as http-peers.sh): every proxy on CPU 0 with one worker (the gateway with one event
# loop, nginx 1 worker, HAProxy 1 thread, MOSN GOMAXPROCS=1); h2load and the backend nginx share CPU 1.
# The backend nginx (1 worker) serves /1k (1 KiB, also to POST) over HTTP/1.1 on 127.0.0.1:18080 and over
# h2c (prior knowledge) on 127.0.0.1:18090. Targets and their hops:
#   direct        h2load -> backend h2c (18090)                          the ceiling
#   gateway       h2c front (29080) -> HTTP/1.1 keep-alive pool -> 18080
#   gateway-h2c   h2c front (29081) -> h2c upstream (upstream_protocol h2c) -> 18090  (h2c both sides, as haproxy)
#   haproxy       h2c front (28081, bind proto h2) -> h2c backend 18090    (h2c both sides)
#   haproxy-h1    h2c front (28082) -> HTTP/1.1 backend 18080              (the gateway's layout)
#   nginx         h2c front (28080, listen http2) -> HTTP/1.1 keep-alive 18080 (nginx 1.22 has no h2 upstream
#                 for plain HTTP; grpc_pass would be h2c but only for gRPC semantics)
#   mosn          h2c front (28092) -> h2c upstream 18090: MOSN's proxy with downstream_protocol and
#                 upstream_protocol "Http2" (MOSN cannot proxy h2c to an HTTP/1.1 upstream), when a binary is
#                 found: MOSN=/path or `mosn` on PATH (never built or shipped by this repo)
# Sidecar pairs (the MOSN 0.2.1 report's layout): client -> A -> B -> backend h2c 18090, h2c on every hop,
# both proxies of a pair on CPU 0 (each with one worker), so the pair's CPU per request is the figure:
#   gateway-pair  29180 -> 29190 -> 18090 (upstream_protocol h2c on both)
#   haproxy-pair  28181 -> 28191 -> 18090 (bind proto h2, server proto h2)
#   mosn-pair     28182 -> 28192 -> 18090 (Http2 -> Http2 on both), when a MOSN binary is found
# Scenarios: c5m100 (h2load -t1 -c5 -m100) and c64m10 (h2load -t1 -c64 -m10) over the single proxies,
# side-c5m100 and side-c64m10 the same loads over the pairs; all -D D seconds, POST with a 1 KiB body (-d)
# to /1k. Every proxy allows at least 128 concurrent streams per connection (the pairs 1000, so one
# A -> B connection can carry all of -c5 -m100).
# Warm-up: --warm SECS (10) of each scenario's load per target, in cycles of at most 10 s on fresh
# connections with 5 s of quiet after each (warm_cycles in lib/bench-common.sh).
# Each (scenario, target) runs REPS times, rotating the order. Every run records req/s, succeeded and
# failed requests, p50/p90/p99/max of h2load's per-request log (--log-file: the time to the end of each
# response), h2load's mean, the proxy's CPU (utime+stime of /proc/PID/stat; a pair's two processes
# together) per request, its peak RSS, and "foreign" CPU (busy time of both CPUs minus our processes
# and h2load): a run with more than MAX_FOREIGN % of a core foreign is marked clean=0 and repeated once.
#
# Writes OUT/runs.tsv (the columns of http-peers.sh, plus mean_us), OUT/raw/*.txt, OUT/meta.txt, then
# OUT/summary.md and OUT/chart.png (benchmarks.jar perf-report --baseline B, B = mosn when MOSN runs,
# else haproxy): per scenario and target the requests per proxy CPU-second (per-proxy-core req/s; a
# pair's per pair-core), its ratio to the baseline, p50 and p99.
# Needs the jars (./mvnw -B -q -pl gateway-bench -am package -DskipTests), h2load (nghttp2-client),
# nginx, haproxy. Ports: 18080/18090 (backend), 29080 (gateway), 29901 (its admin), 29081/29902
# (gateway-h2c), 28080 (nginx), 28081/28082 (HAProxy), 28092/34911 (MOSN and its admin); pairs
# 29180/29190 (admin 29911/29912), 28181/28191, 28182/28192 (MOSN admin 34912/34913).
# Everything binds 127.0.0.1, is bounded in time, and is stopped by PID on exit.
# usage: h2-peers.sh [--out DIR] [--reps N] [-D SECS] [--warm SECS] [--scenarios "c5m100 c64m10 side-c5m100 side-c64m10"]
#                    [--targets "direct gateway gateway-h2c haproxy haproxy-h1 nginx mosn gateway-pair haproxy-pair mosn-pair"]
#                    [--baseline TARGET] [--gateway-jar JAR] [--quick] [--quiet-wait S] [--max-foreign PCT]
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$(pwd)
GW_JAR=$ROOT/gateway-server/target/sluice.jar
BENCH=${BENCH_JAR:-$ROOT/gateway-bench/target/benchmarks.jar}
OUT=/tmp/h2-peers-$(date +%Y%m%d-%H%M%S)
REPS=3
D=10
WARM=10
SCENARIOS="c5m100 c64m10 side-c5m100 side-c64m10"
TARGETS="direct gateway gateway-h2c haproxy haproxy-h1 nginx mosn gateway-pair haproxy-pair mosn-pair"
BASELINE=""
MAX_FOREIGN=15
QUIET_WAIT=30
GW_JAVA_OPTS=${GW_JAVA_OPTS:-"-XX:ActiveProcessorCount=1 -Xms256m -Xmx256m -XX:+UseParallelGC"}
while [ $# -gt 0 ]; do
  case $1 in
    --out) OUT=$2; shift 2;;
    --reps) REPS=$2; shift 2;;
    -D) D=$2; shift 2;;
    --warm) WARM=$2; shift 2;;
    --scenarios) SCENARIOS=$2; shift 2;;
    --targets) TARGETS=$2; shift 2;;
    --baseline) BASELINE=$2; shift 2;;
    --gateway-jar) GW_JAR=$(realpath "$2"); shift 2;;
    --quiet-wait) QUIET_WAIT=$2; shift 2;;
    --max-foreign) MAX_FOREIGN=$2; shift 2;;
    --quick) REPS=1; D=3; WARM=2; QUIET_WAIT=0; shift;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d'; exit 0;;
    *) echo "unknown option $1" >&2; exit 2;;
  esac
done
for sc in $SCENARIOS; do [[ $sc =~ ^(side-)?c[0-9]+m[0-9]+$ ]] || { echo "bad scenario $sc (cNmM or side-cNmM)" >&2; exit 2; }; done
[[ $REPS =~ ^[0-9]+$ && $D =~ ^[0-9]+$ && $WARM =~ ^[0-9]+$ && $D -le 120 && $WARM -le 120 && $REPS -le 10 ]] \
  || { echo "bad --reps/-D/--warm" >&2; exit 2; }
mkdir -p "$OUT/raw" "$OUT/run"
OUT=$(realpath "$OUT")
RUN=$OUT/run
HZ=$(getconf CLK_TCK)
declare -A PID_OF=()
# shellcheck source=lib/bench-common.sh
. "$ROOT/gateway-bench/scripts/lib/bench-common.sh"

has() { [[ " $TARGETS " == *" $1 "* ]]; }
drop() { TARGETS=" $TARGETS "; TARGETS=${TARGETS// $1 / }; }
command -v h2load >/dev/null || { echo "h2load is needed (apt-get install -y nghttp2-client)" >&2; exit 1; }
command -v nginx >/dev/null || { echo "nginx is needed for the backend (apt-get install -y nginx-light)" >&2; exit 1; }
command -v haproxy >/dev/null || { log "haproxy not available: HAProxy left out"; drop haproxy-h1; drop haproxy; drop haproxy-pair; }
MOSN_BIN=${MOSN:-$(command -v mosn || true)}
if [ -z "$MOSN_BIN" ] || [ ! -x "$MOSN_BIN" ]; then
  MOSN_BIN=""; if has mosn || has mosn-pair; then log "mosn not on PATH (set MOSN=/path): MOSN left out"; fi; drop mosn; drop mosn-pair
fi
if [[ " $TARGETS " == *" gateway"* ]] && [ ! -f "$GW_JAR" ]; then
  echo "build first: ./mvnw -B -q -pl gateway-server -am package -DskipTests" >&2; exit 1
fi
[ -n "$BASELINE" ] || { if [ -n "$MOSN_BIN" ]; then BASELINE=mosn; else BASELINE=haproxy; fi; }
require_free_ports 18080 18090 29080 29901 29081 29902 28080 28081 28082 28092 34911 29180 29190 29911 29912 28181 28191 28182 28192 34912 34913
trap cleanup EXIT

# ---- configs -----------------------------------------------------------------------------------
body 1024 q >"$RUN/1k.bin"
cat >"$RUN/backend.conf" <<EOF
worker_processes 1;
daemon off;
pid $RUN/backend.pid;
error_log $RUN/backend.err warn;
worker_rlimit_nofile 16384;
events { worker_connections 8192; use epoll; }
http {
  access_log off; $(nginx_temp_paths b)
  keepalive_requests 10000000; keepalive_timeout 300s; server_tokens off;
  http2_max_concurrent_streams 1000; http2_max_requests 100000000;
  default_type application/octet-stream;
  server {
    listen 127.0.0.1:18080 backlog=4096;
    listen 127.0.0.1:18090 http2 backlog=4096;
    location / { client_body_buffer_size 16k; return 200 "$(body 1024 a)"; }
  }
}
EOF
gw_config() { # file port admin-port upstream-protocol(h1|h2c) upstream-port streams
  local up=""; [ "$4" = h2c ] && up='"upstream_protocol": "h2c", '
  cat >"$1" <<EOF
{
  "listeners": [ { "name": "bench", "address": "127.0.0.1", "port": $2, "routes": [{ "cluster": "backend" }],
                   "http": { "x_forwarded": false, "http2": { "max_concurrent_streams": $6 } } } ],
  "clusters": [ { "name": "backend", ${up}"hosts": ["127.0.0.1:$5"] } ],
  "admin": { "enabled": true, "port": $3 },
  "transport": { "worker_threads": 1 }
}
EOF
}
gw_config "$RUN/gw.json" 29080 29901 h1 18080 128
gw_config "$RUN/gw-h2c.json" 29081 29902 h2c 18090 128
gw_config "$RUN/gw-side-a.json" 29180 29911 h2c 29190 1000
gw_config "$RUN/gw-side-b.json" 29190 29912 h2c 18090 1000
cat >"$RUN/nginx.conf" <<EOF
worker_processes 1;
daemon off;
pid $RUN/nginx.pid;
error_log $RUN/nginx.err warn;
worker_rlimit_nofile 16384;
events { worker_connections 8192; use epoll; }
http {
  access_log off; $(nginx_temp_paths n)
  keepalive_requests 10000000; keepalive_timeout 300s; server_tokens off;
  http2_max_concurrent_streams 128; http2_max_requests 100000000;
  upstream backend { server 127.0.0.1:18080; keepalive 1024; keepalive_requests 10000000; keepalive_timeout 300s; }
  server {
    listen 127.0.0.1:28080 http2 backlog=4096;
    location / { proxy_pass http://backend; proxy_http_version 1.1; proxy_set_header Connection ""; }
  }
}
EOF
haproxy_config() { # name listen-port server-line [streams]
  cat >"$RUN/$1.cfg" <<EOF
global
    nbthread 1
    maxconn 8000
    tune.h2.max-concurrent-streams ${4:-128}
defaults
    mode http
    option http-keep-alive
    http-reuse always
    timeout connect 5s
    timeout client 60s
    timeout server 60s
    maxconn 8000
frontend fe
    bind 127.0.0.1:$2 proto h2 backlog 4096
    default_backend be
backend be
    $3
EOF
}
haproxy_config haproxy 28081 "server s0 127.0.0.1:18090 proto h2"
haproxy_config haproxy-h1 28082 "server s0 127.0.0.1:18080"
haproxy_config haproxy-side-a 28181 "server s0 127.0.0.1:28191 proto h2" 1000
haproxy_config haproxy-side-b 28191 "server s0 127.0.0.1:18090 proto h2" 1000
mosn_config() { # name listen-port upstream-port admin-port: one Http2 -> Http2 proxy listener, one cluster
  local d=$RUN/$1; mkdir -p "$d/conf" "$d/logs"
  cat >"$d/conf/mosn.json" <<EOF
{
  "disable_upgrade": true,
  "servers": [ {
    "default_log_path": "$d/logs/mosn.log", "default_log_level": "ERROR", "processor": 1,
    "routers": [ { "router_config_name": "h2_router", "virtual_hosts": [ { "name": "h2_vh", "domains": ["*"],
      "routers": [ { "match": { "prefix": "/" }, "route": { "cluster_name": "h2_backend" } } ] } ] } ],
    "listeners": [ { "name": "h2_listener", "address": "127.0.0.1:$2", "bind_port": true,
      "filter_chains": [ { "filters": [ { "type": "proxy", "config": { "downstream_protocol": "Http2",
        "upstream_protocol": "Http2", "router_config_name": "h2_router" } } ] } ] } ]
  } ],
  "cluster_manager": { "clusters": [ { "name": "h2_backend", "type": "SIMPLE", "lb_type": "LB_ROUNDROBIN",
    "conn_buffer_limit_bytes": 32768, "hosts": [ { "address": "127.0.0.1:$3" } ] } ] },
  "admin": { "address": { "socket_address": { "address": "127.0.0.1", "port_value": $4 } } }
}
EOF
}
port_of() { case $1 in direct) echo 18090;; gateway) echo 29080;; gateway-h2c) echo 29081;; nginx) echo 28080;; haproxy) echo 28081;; haproxy-h1) echo 28082;;
                       mosn) echo 28092;; gateway-pair) echo 29180;; haproxy-pair) echo 28181;; mosn-pair) echo 28182;; esac; }
pids_of() { case $1 in direct) echo "";; gateway-pair) echo "${PID_OF[gateway-side-a]} ${PID_OF[gateway-side-b]}";;
                       haproxy-pair) echo "${PID_OF[haproxy-side-a]} ${PID_OF[haproxy-side-b]}";;
                       mosn-pair) echo "${PID_OF[mosn-side-a]} ${PID_OF[mosn-side-b]}";; *) echo "${PID_OF[$1]}";; esac; }
is_pair() { [[ $1 == *-pair ]]; }

start_targets() {
  local t n
  for t in $TARGETS; do
    case $t in
      direct) ;;
      gateway) start gateway 0 java $GW_JAVA_OPTS -jar "$GW_JAR" -c "$RUN/gw.json";;
      gateway-h2c) start gateway-h2c 0 java $GW_JAVA_OPTS -jar "$GW_JAR" -c "$RUN/gw-h2c.json";;
      nginx) start nginx 0 nginx -c "$RUN/nginx.conf" -p "$RUN";;
      haproxy|haproxy-h1) start "$t" 0 haproxy -db -f "$RUN/$t.cfg";;
      mosn) mosn_config mosn 28092 18090 34911; start mosn 0 env GOMAXPROCS=1 "$MOSN_BIN" start -c "$RUN/mosn/conf/mosn.json";;
      gateway-pair) for n in a b; do start "gateway-side-$n" 0 java $GW_JAVA_OPTS -jar "$GW_JAR" -c "$RUN/gw-side-$n.json"; done;;
      haproxy-pair) for n in a b; do start "haproxy-side-$n" 0 haproxy -db -f "$RUN/haproxy-side-$n.cfg"; done;;
      mosn-pair)
        mosn_config mosn-side-a 28182 28192 34912; mosn_config mosn-side-b 28192 18090 34913
        for n in a b; do start "mosn-side-$n" 0 env GOMAXPROCS=1 "$MOSN_BIN" start -c "$RUN/mosn-side-$n/conf/mosn.json"; done;;
      *) echo "unknown target $t" >&2; exit 2;;
    esac
  done
  for t in $TARGETS; do wait_port "$(port_of "$t")" || true; done
  if has gateway-pair; then wait_port 29190 || true; fi
  if has haproxy-pair; then wait_port 28191 || true; fi
  if has mosn-pair; then wait_port 28192 || true; fi
}

# ---- load and its report -----------------------------------------------------------------------
load_cmd() { # scenario port [seconds] [log-file]
  local s=${1#side-}; local c=${s#c}; c=${c%m*}; local m=${s#*m}
  echo "h2load -t1 -c$c -m$m -D ${3:-$D} -d $RUN/1k.bin ${4:+--log-file=$4} http://127.0.0.1:$2/1k"
}
parse() { # raw log -> "rps ok failed mean_us p50 p75 p90 p99 max" (µs; "-" when missing)
  local pcts="- - - - -"
  if [ -s "$2" ]; then
    pcts=$(cut -f3 "$2" | sort -n | awk '{ v[NR] = $1 } function at(q, i) { i = int(NR * q + 0.999999); if (i < 1) i = 1; if (i > NR) i = NR; return v[i] }
                                         END { if (NR == 0) print "- - - - -"; else print at(0.50), at(0.75), at(0.90), at(0.99), v[NR] }')
  fi
  awk -v pcts="$pcts" '/^finished in/ { gsub(/,/, ""); rps = $4 }
       /^requests:/ { gsub(/,/, ""); ok = $8; failed = $10 + $12 + $14 }
       /^time for request:/ { mn = $7 }
       function us(v) { n = v + 0; if (v ~ /us$/) return int(n); if (v ~ /ms$/) return int(n * 1000); if (v ~ /s$/) return int(n * 1000000); return "-" }
       END { printf "%s %d %d %s %s\n", rps + 0, ok, failed, us(mn), pcts }' "$1"
}
printf 'scenario\ttarget\trep\tattempt\trps\tsucceeded\tfailed\tp50_us\tp75_us\tp90_us\tp95_us\tp99_us\tmax_us\tproxy_ticks\tproxy_us_per_req\tproxy_cpu_pct\trss_kb\tclient_cpu_pct\tbackend_cpu_pct\tforeign_cpu_pct\twall_s\tclean\tmean_us\n' >"$OUT/runs.tsv"
measure() { # scenario target rep attempt
  local sc=$1 t=$2 rep=$3 att=$4 pids raw lg b0 b1 p0 p1 k0 k1 o0 o1 t0 t1 peak ct
  pids=$(pids_of "$t")
  raw="$OUT/raw/$sc-$t-rep$rep$( [ "$att" -gt 0 ] && echo "-retry$att").txt"; lg=$RUN/h2load-requests.log
  rss_sampler_start $pids
  b0=$(busy); p0=$(ticks $pids); k0=$(ticks "${PID_OF[backend]}"); o0=$(all_ours); t0=$(date +%s.%N)
  run_counted 1 timeout $(( D + 60 )) $(load_cmd "$sc" "$(port_of "$t")" "$D" "$lg") >"$raw" 2>&1 || true
  t1=$(date +%s.%N); b1=$(busy); p1=$(ticks $pids); k1=$(ticks "${PID_OF[backend]}"); o1=$(all_ours)
  peak=$(rss_sampler_stop)
  ct=$(awk '/^CLIENTTICKS/ {print $2}' "$raw"); ct=${ct:-0}
  local rps ok failed mean p50 p75 p90 p99 mx
  read -r rps ok failed mean p50 p75 p90 p99 mx <<<"$(parse "$raw" "$lg")"; rm -f "$lg"
  local row c_pt c_us c_pct c_cl c_bk c_fo c_w clean
  row=$(awk -v w0="$t0" -v w1="$t1" -v hz="$HZ" -v pt=$(( p1 - p0 )) -v kt=$(( k1 - k0 )) -v ot=$(( o1 - o0 )) -v ct="$ct" \
            -v bt=$(( b1 - b0 )) -v ok="${ok:-0}" -v mf="$MAX_FOREIGN" 'BEGIN { w = w1 - w0;
      f = 100 * (bt - ot - ct) / hz / w; if (f < 0) f = 0;
      printf "%d\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t%d", pt, (ok > 0 ? pt * 1e6 / hz / ok : 0), 100 * pt / hz / w,
             100 * ct / hz / w, 100 * kt / hz / w, f, w, (f <= mf) }')
  IFS=$'\t' read -r c_pt c_us c_pct c_cl c_bk c_fo c_w clean <<<"$row"
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$sc" "$t" "$rep" "$att" \
      "${rps:-0}" "${ok:-0}" "${failed:-0}" "${p50//-/}" "${p75//-/}" "${p90//-/}" "${p99//-/}" "${mx//-/}" \
      "$c_pt" "$c_us" "$c_pct" "${peak:-0}" "$c_cl" "$c_bk" "$c_fo" "$c_w" "$clean" "${mean//-/}" >>"$OUT/runs.tsv"
  log "$(printf '%-11s %-12s rep%s %9s req/s  p50 %6s us  p99 %6s us  failed %s  proxy %5s us/req (%s%%)  peak rss %s kB  foreign %s%%%s' \
      "$sc" "$t" "$rep" "$rps" "$p50" "$p99" "$failed" "$c_us" "$c_pct" "${peak:-0}" "$c_fo" "$( [ "$clean" = 1 ] || echo '  NOISY')")"
  [ "$clean" = 1 ]
}
targets_of() { # scenario -> "direct" + the single proxies, or + the pairs
  local t out="direct"
  for t in $TARGETS; do [ "$t" = direct ] && continue
    if [[ $1 == side-* ]]; then is_pair "$t" && out="$out $t"; else is_pair "$t" || out="$out $t"; fi
  done
  echo "$out"
}

ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
start backend 1 nginx -c "$RUN/backend.conf" -p "$RUN"
wait_port 18090
start_targets
# warm-up: each scenario's own load on each of its targets, WARM s in cycles of at most 10 s on fresh
# connections with 5 s of quiet after each (warm_cycles: a JVM's first fresh connections and idle
# wake-ups otherwise deoptimise compiled code inside the measured runs)
for sc in $SCENARIOS; do
  for t in $(targets_of "$sc"); do [ "$t" = direct ] && continue
    warm_cycles "$t-$sc" taskset -c 1 $(load_cmd "$sc" "$(port_of "$t")" {})
  done
done
for rep in $(seq 1 "$REPS"); do
  for sc in $SCENARIOS; do
    list=$(targets_of "$sc"); n=$(wc -w <<<"$list")
    [ "$n" -gt 1 ] || continue
    for i in $(seq 0 $(( n - 1 ))); do
      t=$(rotated "$i" "$rep" "$list")
      quiet_gate
      att=0
      until measure "$sc" "$t" "$rep" "$att" || [ "$att" -ge 1 ]; do att=$(( att + 1 )); quiet_gate; done
    done
  done
done
{
  meta_host
  echo "gateway: $GW_JAR ($(cd "$ROOT" && git rev-parse --short HEAD 2>/dev/null)), java $GW_JAVA_OPTS"
  echo "nginx: $(nginx -v 2>&1 | head -1), 1 worker; h2load: $(h2load --version 2>&1 | head -1)"
  command -v haproxy >/dev/null && echo "haproxy: $(haproxy -v 2>/dev/null | head -1 | sed 's/ - http[^ ,]*//'), 1 thread"
  [ -n "$MOSN_BIN" ] && echo "mosn: $MOSN_BIN ($(timeout 5 "$MOSN_BIN" --version 2>/dev/null | grep -i "version" | head -1 || true)), GOMAXPROCS=1, Http2 -> Http2"
  echo "layout: proxies (and both proxies of a pair) on CPU 0, h2load and the backend on CPU 1; reps $REPS; duration ${D}s; warm-up ${WARM}s per scenario and target (warm_cycles)"
  echo "latency: percentiles of h2load --log-file (time to the end of each response); baseline of summary.md: $BASELINE"
  for sc in $SCENARIOS; do echo "  $sc: $(load_cmd "$sc" PORT) over: $(targets_of "$sc")"; done
} >"$OUT/meta.txt"
rm -rf "$RUN/mosn" "$RUN/mosn-side-a" "$RUN/mosn-side-b"
if [ -f "$BENCH" ]; then
  java -Djava.awt.headless=true -jar "$BENCH" perf-report --baseline "$BASELINE" "$OUT" || log "WARN perf-report failed"
else
  log "benchmarks.jar not built: no summary.md (runs.tsv has every figure)"
fi
log "results in $OUT"
