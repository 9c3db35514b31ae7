#!/usr/bin/env bash
# HTTP/2 (h2c) side by side: the gateway, HAProxy and nginx as h2c reverse proxies in front of the same
# backend nginx, the MOSN 0.2.1 HTTP/2 scenario (h2load -c5 -m100, 1 KiB request and response) and a
# many-connections one (-c64 -m10), interleaved and repeated.
#
# Layout ("pinned", as http-peers.sh): every proxy on CPU 0 with one worker (the gateway with one event
# loop, nginx 1 worker, HAProxy 1 thread); h2load and the backend nginx share CPU 1. The backend nginx
# (1 worker) serves /1k (1 KiB, also to POST) over HTTP/1.1 on 127.0.0.1:18080 and over h2c (prior
# knowledge) on 127.0.0.1:18090. Targets and their hops:
#   direct        h2load -> backend h2c (18090)                          the ceiling
#   gateway       h2c front (29080) -> HTTP/1.1 keep-alive pool -> 18080
#   gateway-h2c   h2c front (29081) -> h2c upstream (upstream_protocol h2c) -> 18090  (h2c both sides, as haproxy)
#   haproxy       h2c front (28081, bind proto h2) -> h2c backend 18090    (h2c both sides)
#   haproxy-h1    h2c front (28082) -> HTTP/1.1 backend 18080              (the gateway's layout)
#   nginx         h2c front (28080, listen http2) -> HTTP/1.1 keep-alive 18080 (nginx 1.22 has no h2 upstream
#                 for plain HTTP; grpc_pass would be h2c but only for gRPC semantics)
# Scenarios: c5m100 (h2load -t1 -c5 -m100) and c64m10 (h2load -t1 -c64 -m10), both -D D seconds, POST
# with a 1 KiB body (-d) to /1k. Every proxy allows at least 100 concurrent streams per connection.
# Each (scenario, target) runs REPS times, rotating the order. Every run records req/s, succeeded and
# failed requests, h2load's mean/max "time for request", the proxy's CPU (utime+stime of
# /proc/PID/stat) per request and its peak RSS.
#
# Writes OUT/runs.tsv, OUT/raw/*.txt, OUT/meta.txt. Needs the gateway jar
# (./mvnw -B -q -pl gateway-server -am package -DskipTests), h2load (nghttp2-client), nginx, haproxy.
# Ports: 18080/18090 (backend), 29080 (gateway), 29901 (its admin), 29081/29902 (gateway-h2c), 28080 (nginx), 28081/28082 (HAProxy).
# Everything binds 127.0.0.1, is bounded in time, and is stopped by PID on exit.
# usage: h2-peers.sh [--out DIR] [--reps N] [-D SECS] [--warm SECS] [--scenarios "c5m100 c64m10"]
#                    [--targets "direct gateway gateway-h2c haproxy haproxy-h1 nginx"] [--gateway-jar JAR] [--quick]
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$(pwd)
GW_JAR=$ROOT/gateway-server/target/sluice.jar
OUT=/tmp/h2-peers-$(date +%Y%m%d-%H%M%S)
REPS=3
D=10
WARM=10
SCENARIOS="c5m100 c64m10"
TARGETS="direct gateway gateway-h2c haproxy haproxy-h1 nginx"
GW_JAVA_OPTS=${GW_JAVA_OPTS:-"-XX:ActiveProcessorCount=1 -Xms256m -Xmx256m -XX:+UseParallelGC"}
while [ $# -gt 0 ]; do
  case $1 in
    --out) OUT=$2; shift 2;;
    --reps) REPS=$2; shift 2;;
    -D) D=$2; shift 2;;
    --warm) WARM=$2; shift 2;;
    --scenarios) SCENARIOS=$2; shift 2;;
    --targets) TARGETS=$2; shift 2;;
    --gateway-jar) GW_JAR=$(realpath "$2"); shift 2;;
    --quick) REPS=1; D=3; WARM=2; shift;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d'; exit 0;;
    *) echo "unknown option $1" >&2; exit 2;;
  esac
done
[[ $REPS =~ ^[0-9]+$ && $D =~ ^[0-9]+$ && $WARM =~ ^[0-9]+$ && $D -le 120 && $WARM -le 120 && $REPS -le 10 ]] \
  || { echo "bad --reps/-D/--warm" >&2; exit 2; }
mkdir -p "$OUT/raw" "$OUT/run"
OUT=$(realpath "$OUT")
RUN=$OUT/run
HZ=$(getconf CLK_TCK)
MAX_FOREIGN=100
QUIET_WAIT=0
declare -A PID_OF=()
# shellcheck source=lib/bench-common.sh
. "$ROOT/gateway-bench/scripts/lib/bench-common.sh"

command -v h2load >/dev/null || { echo "h2load is needed (apt-get install -y nghttp2-client)" >&2; exit 1; }
command -v nginx >/dev/null || { echo "nginx is needed for the backend (apt-get install -y nginx-light)" >&2; exit 1; }
command -v haproxy >/dev/null || { log "haproxy not available: HAProxy left out"; TARGETS=${TARGETS//haproxy-h1/}; TARGETS=${TARGETS//haproxy/}; }
if [[ " $TARGETS " == *" gateway"* ]] && [ ! -f "$GW_JAR" ]; then
  echo "build first: ./mvnw -B -q -pl gateway-server -am package -DskipTests" >&2; exit 1
fi
for p in 18080 18090 29080 29901 29081 29902 28080 28081 28082; do port_busy $p && { echo "port $p in use" >&2; exit 1; }; done
trap cleanup EXIT
stop() { local p=${PID_OF[$1]:-}; [ -n "$p" ] || return 0; kill -TERM -- "-$p" 2>/dev/null || true
         for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done; kill -KILL -- "-$p" 2>/dev/null || true; unset "PID_OF[$1]"; }

# ---- configs -----------------------------------------------------------------------------------
body() { head -c "$1" /dev/zero | tr '\0' "$2"; }
body 1024 q >"$RUN/1k.bin"
temp_paths() { echo "client_body_temp_path $RUN/$1_body; proxy_temp_path $RUN/$1_proxy; fastcgi_temp_path $RUN/$1_fcgi;
  uwsgi_temp_path $RUN/$1_uwsgi; scgi_temp_path $RUN/$1_scgi;"; }
cat >"$RUN/backend.conf" <<EOF
worker_processes 1;
daemon off;
pid $RUN/backend.pid;
error_log $RUN/backend.err warn;
worker_rlimit_nofile 16384;
events { worker_connections 8192; use epoll; }
http {
  access_log off; $(temp_paths b)
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
cat >"$RUN/gw.json" <<EOF
{
  "listeners": [ { "name": "bench", "address": "127.0.0.1", "port": 29080, "routes": [{ "cluster": "backend" }],
                   "http": { "x_forwarded": false, "http2": { "max_concurrent_streams": 128 } } } ],
  "clusters": [ { "name": "backend", "hosts": ["127.0.0.1:18080"] } ],
  "admin": { "enabled": true, "port": 29901 },
  "transport": { "worker_threads": 1 }
}
EOF
cat >"$RUN/gw-h2c.json" <<EOF
{
  "listeners": [ { "name": "bench", "address": "127.0.0.1", "port": 29081, "routes": [{ "cluster": "backend" }],
                   "http": { "x_forwarded": false, "http2": { "max_concurrent_streams": 128 } } } ],
  "clusters": [ { "name": "backend", "upstream_protocol": "h2c", "hosts": ["127.0.0.1:18090"] } ],
  "admin": { "enabled": true, "port": 29902 },
  "transport": { "worker_threads": 1 }
}
EOF
cat >"$RUN/nginx.conf" <<EOF
worker_processes 1;
daemon off;
pid $RUN/nginx.pid;
error_log $RUN/nginx.err warn;
worker_rlimit_nofile 16384;
events { worker_connections 8192; use epoll; }
http {
  access_log off; $(temp_paths n)
  keepalive_requests 10000000; keepalive_timeout 300s; server_tokens off;
  http2_max_concurrent_streams 128; http2_max_requests 100000000;
  upstream backend { server 127.0.0.1:18080; keepalive 1024; keepalive_requests 10000000; keepalive_timeout 300s; }
  server {
    listen 127.0.0.1:28080 http2 backlog=4096;
    location / { proxy_pass http://backend; proxy_http_version 1.1; proxy_set_header Connection ""; }
  }
}
EOF
haproxy_config() { # name listen-port server-line
  cat >"$RUN/$1.cfg" <<EOF
global
    nbthread 1
    maxconn 8000
    tune.h2.max-concurrent-streams 128
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
port_of() { case $1 in direct) echo 18090;; gateway) echo 29080;; gateway-h2c) echo 29081;; nginx) echo 28080;; haproxy) echo 28081;; haproxy-h1) echo 28082;; esac; }

start_targets() {
  local t
  for t in $TARGETS; do
    case $t in
      gateway) start gateway 0 java $GW_JAVA_OPTS -jar "$GW_JAR" -c "$RUN/gw.json";;
      gateway-h2c) start gateway-h2c 0 java $GW_JAVA_OPTS -jar "$GW_JAR" -c "$RUN/gw-h2c.json";;
      nginx) start nginx 0 nginx -c "$RUN/nginx.conf" -p "$RUN";;
      haproxy|haproxy-h1) start "$t" 0 haproxy -db -f "$RUN/$t.cfg";;
    esac
  done
  for t in $TARGETS; do wait_port "$(port_of "$t")" || true; done
}

# ---- load and its report -----------------------------------------------------------------------
load_cmd() { # scenario port
  local c=${1#c}; c=${c%m*}; local m=${1#*m}
  echo "h2load -t1 -c$c -m$m -D $D -d $RUN/1k.bin http://127.0.0.1:$2/1k"
}
parse() { # raw -> "rps ok failed mean_us max_us"
  awk '/^finished in/ { gsub(/,/, ""); rps = $4 }
       /^requests:/ { gsub(/,/, ""); ok = $8; failed = $10 + $12 + $14 }
       /^time for request:/ { mn = $7; mx = $4 }
       function us(v) { n = v + 0; if (v ~ /us$/) return int(n); if (v ~ /ms$/) return int(n * 1000); if (v ~ /s$/) return int(n * 1000000); return "" }
       END { printf "%s %s %s %s %s\n", rps + 0, ok + 0, failed + 0, us(mn), us(mx) }' "$1"
}
printf 'scenario\ttarget\trep\trps\tsucceeded\tfailed\tmean_us\tmax_us\tproxy_ticks\tproxy_us_per_req\tproxy_cpu_pct\trss_kb\twall_s\n' >"$OUT/runs.tsv"
measure() { # scenario target rep
  local sc=$1 t=$2 rep=$3 pids="" raw p0 p1 t0 t1 peak=0 sampler
  [ "$t" != direct ] && pids=${PID_OF[$t]}
  raw="$OUT/raw/$sc-$t-rep$rep.txt"
  if [ -n "$pids" ]; then ( while :; do rss_tree_kb $pids; sleep 0.2; done ) >"$RUN/rss-samples" 2>/dev/null & sampler=$!; fi
  p0=$(ticks $pids); t0=$(date +%s.%N)
  timeout $(( D + 60 )) taskset -c 1 $(load_cmd "$sc" "$(port_of "$t")") >"$raw" 2>&1 || true
  t1=$(date +%s.%N); p1=$(ticks $pids)
  if [ -n "$pids" ]; then kill "$sampler" 2>/dev/null; wait "$sampler" 2>/dev/null || true; peak=$(sort -n "$RUN/rss-samples" | tail -1); fi
  read -r rps ok failed mean mx <<<"$(parse "$raw")"
  local row
  row=$(awk -v w0="$t0" -v w1="$t1" -v hz="$HZ" -v pt=$(( p1 - p0 )) -v ok="${ok:-0}" 'BEGIN { w = w1 - w0;
      printf "%d\t%.1f\t%.1f\t%.1f", pt, (ok > 0 ? pt * 1e6 / hz / ok : 0), 100 * pt / hz / w, w }')
  IFS=$'\t' read -r c_pt c_us c_pct c_w <<<"$row"
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$sc" "$t" "$rep" "$rps" "$ok" "$failed" "${mean:-}" "${mx:-}" \
      "$c_pt" "$c_us" "$c_pct" "${peak:-0}" "$c_w" >>"$OUT/runs.tsv"
  log "$(printf '%-7s %-10s rep%s %9s req/s  mean %7s us  failed %s  proxy %5s us/req (%s%%)  peak rss %s kB' \
      "$sc" "$t" "$rep" "$rps" "${mean:-?}" "$failed" "$c_us" "$c_pct" "${peak:-0}")"
}

ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
start backend 1 nginx -c "$RUN/backend.conf" -p "$RUN"
wait_port 18090
start_targets
if [ "$WARM" -gt 0 ]; then
  for t in $TARGETS; do [ "$t" = direct ] && continue
    timeout $(( WARM + 30 )) taskset -c 1 h2load -t1 -c5 -m100 -D "$WARM" -d "$RUN/1k.bin" "http://127.0.0.1:$(port_of "$t")/1k" >/dev/null 2>&1 || true
  done
fi
read -r -a arr <<<"$TARGETS"; n=${#arr[@]}
for rep in $(seq 1 "$REPS"); do
  for sc in $SCENARIOS; do
    for i in $(seq 0 $(( n - 1 ))); do measure "$sc" "${arr[$(( (i + rep - 1) % n ))]}" "$rep"; done
  done
done
{
  echo "date: $(date -u +%FT%TZ)"
  echo "host: $(nproc) CPUs, $(awk -F: '/model name/ {print $2; exit}' /proc/cpuinfo | sed 's/^ *//'), kernel $(uname -r)"
  echo "gateway: $GW_JAR ($(cd "$ROOT" && git rev-parse --short HEAD 2>/dev/null)), java $GW_JAVA_OPTS"
  echo "nginx: $(nginx -v 2>&1 | head -1), 1 worker; h2load: $(h2load --version 2>&1 | head -1)"
  command -v haproxy >/dev/null && echo "haproxy: $(haproxy -v 2>/dev/null | head -1 | sed 's/ - http[^ ,]*//'), 1 thread"
  echo "layout: proxies on CPU 0, h2load and the backend on CPU 1; reps $REPS; duration ${D}s; warm-up ${WARM}s per target"
  for sc in $SCENARIOS; do echo "  $sc: $(load_cmd "$sc" PORT)"; done
} >"$OUT/meta.txt"
log "results in $OUT/runs.tsv"
