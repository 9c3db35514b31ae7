#!/usr/bin/env bash
# WebSocket side by side (issue #18: "1 KiB messages echoed through the gateway at >= 0.9x nginx's
# per-core rate in the same run"): the gateway, nginx and HAProxy tunnelling WebSocket connections to
# the same echo backend, in one run on one machine, interleaved and repeated.
#
# Layout ("pinned", as http-peers.sh): every proxy on CPU 0 with one worker (the gateway with one event
# loop, nginx 1 worker, HAProxy 1 thread); the load generator (benchmarks.jar ws-load, one event loop)
# and the echo backend (benchmarks.jar ws-echo, one event loop; nginx cannot echo) share CPU 1.
# Targets and their hops (each a real RFC 6455 handshake, then the proxy's byte tunnel):
#   direct    ws-load -> ws-echo (18095)                               the ceiling
#   gateway   29085 -> 18095: a plain route (WebSocket upgrades are allowed by default, docs/traffic.md)
#   nginx     28085 -> 18095: proxy_http_version 1.1, Upgrade $http_upgrade, Connection "upgrade"
#   haproxy   28086 -> 18095: mode http (upgrades tunnelled natively), timeout tunnel
# Scenarios (ws-load -t1, SIZE-byte messages, binary unless --text):
#   c64m1     64 connections, one message in flight each (closed loop: the next when the echo is back)
#   c16m16    16 connections, 16 messages in flight each (pipelined: more messages per wake-up)
# Each (scenario, target) runs REPS times, rotating the order. Every run records messages/s, p50-p99
# of the echo latency, the proxy's CPU (utime+stime of /proc/PID/stat, the proxy's whole process tree)
# over the client's run divided by every message echoed in it (proxy_us_per_req; the client's -w
# warm-up second included on both sides), its peak RSS, and "foreign" CPU (busy time of both CPUs
# minus our processes and the client): a run with more than MAX_FOREIGN % of a core foreign is marked
# clean=0 and repeated once.
#
# Writes OUT/runs.tsv (the columns of http-peers.sh, plus proxy_cpu_s and echoed), OUT/raw/*.txt,
# OUT/meta.txt, then OUT/summary.md and OUT/chart.png (benchmarks.jar perf-report --baseline nginx: in
# its tables a "request" is one echoed message, "requests per proxy CPU-s" the messages per proxy
# CPU-second and "per core vs nginx" the ratio #18 asks for, >= 0.90).
#
# Needs the jars (./mvnw -B -q -pl gateway-bench -am package -DskipTests), nginx; HAProxy when installed.
# Ports: 18095 (echo), 29085 (gateway), 29915 (its admin), 28085 (nginx), 28086 (HAProxy). Everything
# binds 127.0.0.1, is bounded in time, and is stopped by PID on exit.
# Warm-up: --warm SECS of each scenario's load per target in cycles of at most 10 s on fresh
# connections (warm_cycles), then --warm-long SECS (30) on the same connections (warm_long).
# usage: ws-peers.sh [--out DIR] [--reps N] [-D SECS] [--warm SECS] [--warm-long SECS] [--scenarios "c64m1 c16m16"]
#                    [--targets "gateway nginx haproxy"] [--size BYTES] [--text] [--gateway-jar JAR] [--quick]
#                    [--quiet-wait S] [--max-foreign PCT]
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$(pwd)
GW_JAR=$ROOT/gateway-server/target/sluice.jar
BENCH=${BENCH_JAR:-$ROOT/gateway-bench/target/benchmarks.jar}
OUT=/tmp/ws-peers-$(date +%Y%m%d-%H%M%S)
REPS=3
D=10
WARM=20
WARM_LONG=30
SCENARIOS="c64m1 c16m16"
TARGETS="gateway nginx haproxy"
SIZE=1024
FRAME=binary
MAX_FOREIGN=15
QUIET_WAIT=30
GW_JAVA_OPTS=${GW_JAVA_OPTS:-"-XX:ActiveProcessorCount=1 -Xms256m -Xmx256m -XX:+UseParallelGC"}
CLIENT_JAVA="java -XX:ActiveProcessorCount=1 -Xms128m -Xmx128m -XX:+UseParallelGC"
while [ $# -gt 0 ]; do
  case $1 in
    --out) OUT=$2; shift 2;;
    --reps) REPS=$2; shift 2;;
    -D) D=$2; shift 2;;
    --warm) WARM=$2; shift 2;;
    --warm-long) WARM_LONG=$2; shift 2;;
    --scenarios) SCENARIOS=$2; shift 2;;
    --targets) TARGETS=${2//direct/}; shift 2;;
    --size) SIZE=$2; shift 2;;
    --text) FRAME=text; shift;;
    --gateway-jar) GW_JAR=$(realpath "$2"); shift 2;;
    --quiet-wait) QUIET_WAIT=$2; shift 2;;
    --max-foreign) MAX_FOREIGN=$2; shift 2;;
    --quick) REPS=1; D=3; WARM=3; WARM_LONG=0; QUIET_WAIT=0; shift;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d'; exit 0;;
    *) echo "unknown option $1" >&2; exit 2;;
  esac
done
for sc in $SCENARIOS; do [[ $sc =~ ^c[0-9]+m[0-9]+$ ]] || { echo "bad scenario $sc (cNmM: N connections, M in flight)" >&2; exit 2; }; done
[[ $REPS =~ ^[0-9]+$ && $D =~ ^[0-9]+$ && $WARM =~ ^[0-9]+$ && $WARM -le 300 && $WARM_LONG =~ ^[0-9]+$ && $WARM_LONG -le 300 \
   && $D -ge 1 && $D -le 120 && $REPS -le 10 && $SIZE =~ ^[0-9]+$ && $SIZE -ge 1 ]] || { echo "bad --reps/-D/--warm/--warm-long/--size" >&2; exit 2; }
mkdir -p "$OUT/raw" "$OUT/run"
OUT=$(realpath "$OUT")
RUN=$OUT/run
HZ=$(getconf CLK_TCK)
declare -A PID_OF=()
# shellcheck source=lib/bench-common.sh
. "$ROOT/gateway-bench/scripts/lib/bench-common.sh"

need_pkg nginx nginx-light || { log "nginx not available: nginx left out (the issue's baseline!)"; TARGETS=${TARGETS//nginx/}; }
need_pkg haproxy haproxy || { log "haproxy not available: HAProxy left out"; TARGETS=${TARGETS//haproxy/}; }
[ -f "$GW_JAR" ] && [ -f "$BENCH" ] || { echo "build first: ./mvnw -B -q -pl gateway-bench -am package -DskipTests" >&2; exit 1; }
require_free_ports 18095 29085 29915 28085 28086
trap cleanup EXIT

# ---- configs -----------------------------------------------------------------------------------
cat >"$RUN/gw.json" <<EOF
{
  "listeners": [ { "name": "ws", "address": "127.0.0.1", "port": 29085, "routes": [{ "cluster": "echo" }],
                   "http": { "x_forwarded": false } } ],
  "clusters": [ { "name": "echo", "hosts": ["127.0.0.1:18095"] } ],
  "admin": { "enabled": true, "port": 29915 },
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
  access_log off; $(nginx_temp_paths n)
  server_tokens off;
  upstream echo { server 127.0.0.1:18095; }
  server {
    listen 127.0.0.1:28085 backlog=4096;
    location / {
      proxy_pass http://echo; proxy_http_version 1.1;
      proxy_set_header Upgrade \$http_upgrade; proxy_set_header Connection "upgrade";
      proxy_read_timeout 300s; proxy_send_timeout 300s;
    }
  }
}
EOF
cat >"$RUN/haproxy.cfg" <<EOF
global
    nbthread 1
    maxconn 8000
defaults
    mode http
    timeout connect 5s
    timeout client 60s
    timeout server 60s
    timeout tunnel 300s
    maxconn 8000
frontend fe
    bind 127.0.0.1:28086 backlog 4096
    default_backend be
backend be
    server s0 127.0.0.1:18095
EOF
port_of() { case $1 in direct) echo 18095;; gateway) echo 29085;; nginx) echo 28085;; haproxy) echo 28086;; esac; }

# ---- load and its report -----------------------------------------------------------------------
load_cmd() { # scenario port [seconds]: the client command (1 s of client warm-up inside each run)
  local c=${1#c}; c=${c%m*}; local m=${1#*m}
  echo "$CLIENT_JAVA -jar $BENCH ws-load -t 1 -c $c -m $m -s $SIZE $( [ "$FRAME" = text ] && echo --text) -w 1s -d ${3:-$D}s ws://127.0.0.1:$2/ws"
}
parse() { # raw -> "rate messages echoed errors p50 p75 p90 p99 max" (microseconds; "-" when missing)
  awk 'function us(v) { n = v + 0; if (v ~ /us$/) return int(n); if (v ~ /ms$/) return int(n * 1000); if (v ~ /s$/) return int(n * 1000000); return "-" }
       /^Messages\/sec:/ { rate = $2 } / messages in / && !m { m = $1 } /messages echoed in all/ { e = $1 }
       /^  Errors:/ { gsub(/,/, ""); err = $3 + $5 + $7 + $10 + $12 }
       $1 ~ /^[0-9.]+%$/ { p[$1] = us($2) }
       function v(k) { return (k in p) ? p[k] : "-" }
       END { printf "%s %d %d %d %s %s %s %s %s\n", (rate == "" ? 0 : rate), m, e, err, v("50%"), v("75%"), v("90%"), v("99%"), v("100%") }' "$1"
}

printf 'scenario\ttarget\trep\tattempt\trps\tsucceeded\tfailed\tp50_us\tp75_us\tp90_us\tp95_us\tp99_us\tmax_us\tproxy_ticks\tproxy_us_per_req\tproxy_cpu_pct\trss_kb\tclient_cpu_pct\tbackend_cpu_pct\tforeign_cpu_pct\twall_s\tclean\tproxy_cpu_s\techoed\n' >"$OUT/runs.tsv"

measure() { # scenario target rep attempt
  local sc=$1 t=$2 rep=$3 att=$4 pids="" raw b0 b1 p0 p1 k0 k1 o0 o1 t0 t1 peak ct
  [ "$t" != direct ] && pids=${PID_OF[$t]}
  raw="$OUT/raw/$sc-$t-rep$rep$( [ "$att" -gt 0 ] && echo "-retry$att").txt"
  rss_sampler_start $pids
  b0=$(busy); p0=$(ticks $pids); k0=$(ticks "${PID_OF[backend]}"); o0=$(all_ours); t0=$(date +%s.%N)
  run_counted 1 timeout $(( D + 60 )) $(load_cmd "$sc" "$(port_of "$t")") >"$raw" 2>&1 || true
  t1=$(date +%s.%N); b1=$(busy); p1=$(ticks $pids); k1=$(ticks "${PID_OF[backend]}"); o1=$(all_ours)
  peak=$(rss_sampler_stop)
  ct=$(awk '/^CLIENTTICKS/ {print $2}' "$raw"); ct=${ct:-0}
  local rate msgs echoed errs p50 p75 p90 p99 mx
  read -r rate msgs echoed errs p50 p75 p90 p99 mx <<<"$(parse "$raw")"
  p50=${p50//-/}; p75=${p75//-/}; p90=${p90//-/}; p99=${p99//-/}; mx=${mx//-/}
  local row c_pt c_us c_pct c_cl c_bk c_fo c_w clean c_s
  row=$(awk -v w0="$t0" -v w1="$t1" -v hz="$HZ" -v pt=$(( p1 - p0 )) -v kt=$(( k1 - k0 )) -v ot=$(( o1 - o0 )) -v ct="$ct" \
            -v bt=$(( b1 - b0 )) -v n="${echoed:-0}" -v mf="$MAX_FOREIGN" 'BEGIN { w = w1 - w0;
      f = 100 * (bt - ot - ct) / hz / w; if (f < 0) f = 0;
      printf "%d\t%.2f\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t%d\t%.3f", pt, (n > 0 ? pt * 1e6 / hz / n : 0), 100 * pt / hz / w,
             100 * ct / hz / w, 100 * kt / hz / w, f, w, (f <= mf), pt / hz }')
  IFS=$'\t' read -r c_pt c_us c_pct c_cl c_bk c_fo c_w clean c_s <<<"$row"
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$sc" "$t" "$rep" "$att" \
      "${rate:-0}" "${msgs:-0}" "${errs:-0}" "${p50:-}" "${p75:-}" "${p90:-}" "${p99:-}" "${mx:-}" \
      "$c_pt" "$c_us" "$c_pct" "${peak:-0}" "$c_cl" "$c_bk" "$c_fo" "$c_w" "$clean" "$c_s" "${echoed:-0}" >>"$OUT/runs.tsv"
  log "$(printf '%-7s %-8s rep%s %9s msg/s  p50 %6s us  p99 %6s us  errors %s  proxy %5s us/msg (%s s, %s%%)  peak rss %s kB  foreign %s%%%s' \
      "$sc" "$t" "$rep" "${rate:-0}" "${p50:-?}" "${p99:-?}" "${errs:-0}" "$c_us" "$c_s" "$c_pct" "${peak:-0}" "$c_fo" "$( [ "$clean" = 1 ] || echo '  NOISY')")"
  [ "$clean" = 1 ]
}

# ---- the fleet ---------------------------------------------------------------------------------
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
start backend 1 java -XX:ActiveProcessorCount=1 -Xms256m -Xmx256m -XX:+UseParallelGC -jar "$BENCH" ws-echo --port 18095 --threads 1
for t in $TARGETS; do
  case $t in
    gateway) start gateway 0 java $GW_JAVA_OPTS -jar "$GW_JAR" -c "$RUN/gw.json";;
    nginx) start nginx 0 nginx -c "$RUN/nginx.conf" -p "$RUN";;
    haproxy) start haproxy 0 haproxy -db -f "$RUN/haproxy.cfg";;
    *) echo "unknown target $t (gateway nginx haproxy)" >&2; exit 2;;
  esac
done
for t in direct $TARGETS; do wait_port "$(port_of "$t")" || true; done

# ---- warm-up: the backend (not measured) and every target with each scenario's shape ------------
warm_targets="direct $TARGETS"
for t in $warm_targets; do
  for sc in $SCENARIOS; do
    warm_cycles "$t-$sc" taskset -c 1 $(load_cmd "$sc" "$(port_of "$t")" {})
  done
  [ "$t" = direct ] || warm_long "$t" taskset -c 1 $(load_cmd "${SCENARIOS%% *}" "$(port_of "$t")" {})
done

# ---- the matrix ----------------------------------------------------------------------------------
list="direct $TARGETS"; n=$(wc -w <<<"$list")
for rep in $(seq 1 "$REPS"); do
  for sc in $SCENARIOS; do
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
  echo "gateway: $GW_JAR ($(cd "$ROOT" && git rev-parse --short HEAD 2>/dev/null)$(cd "$ROOT" && git diff --quiet 2>/dev/null || echo '+dirty')), java $GW_JAVA_OPTS, $(java -version 2>&1 | head -1)"
  command -v nginx >/dev/null && echo "nginx: $(nginx -v 2>&1 | head -1), 1 worker, proxy_http_version 1.1 + Upgrade/Connection headers"
  command -v haproxy >/dev/null && echo "haproxy: $(haproxy -v 2>/dev/null | head -1 | sed 's/ - http[^ ,]*//'), 1 thread, mode http"
  echo "backend: benchmarks.jar ws-echo, 1 event loop, CPU 1; client: ws-load on CPU 1; proxies on CPU 0"
  echo "messages: $SIZE-byte $FRAME; a 'request' in summary.md is one echoed message"
  echo "scenarios: $SCENARIOS; reps $REPS; duration ${D}s; warm-up ${WARM}s per scenario and target then ${WARM_LONG}s steady; max foreign ${MAX_FOREIGN}% of a core"
  for sc in $SCENARIOS; do echo "  $sc: $(load_cmd "$sc" PORT)"; done
} >"$OUT/meta.txt"
java -Djava.awt.headless=true -jar "$BENCH" perf-report --baseline nginx "$OUT" >/dev/null || log "WARN perf-report failed"
if [ -f "$OUT/summary.md" ]; then
  { echo "# WebSocket echo, $SIZE-byte $FRAME messages: a \"request\" below is one echoed message; issue #18 asks for \"per core vs nginx\" >= 0.90"
    echo; cat "$OUT/summary.md"; } >"$OUT/summary.md.tmp" && mv "$OUT/summary.md.tmp" "$OUT/summary.md"
  cat "$OUT/summary.md"
fi
log "results in $OUT"
