#!/usr/bin/env bash
# The CPU cost of rate limiting (issue #17: "global rate limiting with leased batches costs under 5 %
# per request against local-only at 10 k req/s on one core"): one gateway per variant, each pinned to
# CPU 0 with one event loop, in front of the same backend nginx, all driven at the same FIXED rate
# (h2load --h1 --rps: RATE requests/s in total over C connections) so CPU per request is compared at
# equal work:
#   none    no rate_limit section (the baseline every configured limit is measured against)
#   local   one rule on every route, local token bucket
#   global  the same rule with "global": true, shared through a real redis-server (leased batches of
#           LEASE tokens, docs/rate-limits.md#global-limits-redis)
# The rule's budget (max_tokens = tokens_per_fill = 16 000 000 per second) is far above the rate, so no
# request is ever limited: what is measured is the decision's cost, not 429s (a run that saw any 4xx is
# reported as such). --lease (100; the gateway's default is 10): a gateway refuses a request that finds
# its leased tokens spent while the next lease is still in flight, so lease_size must cover
# 2 x rate x Redis round trip (docs/rate-limits.md); with 10 at 10 k req/s on a busy 2-core machine
# most requests were refused (a quick run: 7 670 of 10 117). Leases per second = rate / lease_size;
# Redis counts the commands its Lua script runs, so its commands per second are a multiple of that. Variants are interleaved REPS times (rotating order). Every run records the
# gateway's CPU (utime+stime of /proc/PID/stat) as CPU-seconds per 10 000 requests, the client's
# achieved rate and latency (h2load's per-request log: p50/p99), Redis's commands per second (INFO
# stats total_commands_processed over the run) and the gateway's Redis leases per second
# (sluice_ratelimit_redis_leases_total), and foreign CPU (a run over MAX_FOREIGN % is marked clean=0 and
# repeated once).
#
# Layout: the gateways on CPU 0; h2load, the backend nginx (1 worker, 128-byte body) and redis-server on
# CPU 1. Writes OUT/runs.tsv, OUT/raw/*, OUT/meta.txt and OUT/summary.md: per variant the medians and
# "global / local" (paired by repetition, median; target < 1.05) and "local / none".
# Needs the gateway jar (./mvnw -B -q -pl gateway-server -am package -DskipTests), h2load
# (nghttp2-client), nginx, redis-server and redis-cli. Ports: 18080 (backend), 16390 (Redis), 29086-29088
# (gateways none/local/global), 29916-29918 (their admin). Everything binds 127.0.0.1, is bounded in
# time, and is stopped by PID on exit.
# usage: ratelimit-cost.sh [--out DIR] [--reps N] [-D SECS] [--warm SECS] [--rate N] [-c CONNS] [--lease N]
#                          [--variants "none local global"] [--gateway-jar JAR] [--quick] [--quiet-wait S] [--max-foreign PCT]
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$(pwd)
GW_JAR=$ROOT/gateway-server/target/sluice.jar
OUT=/tmp/ratelimit-cost-$(date +%Y%m%d-%H%M%S)
REPS=5
D=20
WARM=30
RATE=10000
CONNS=20
LEASE=100
VARIANTS="none local global"
MAX_FOREIGN=15
QUIET_WAIT=30
GW_JAVA_OPTS=${GW_JAVA_OPTS:-"-XX:ActiveProcessorCount=1 -Xms256m -Xmx256m -XX:+UseParallelGC"}
while [ $# -gt 0 ]; do
  case $1 in
    --out) OUT=$2; shift 2;;
    --reps) REPS=$2; shift 2;;
    -D) D=$2; shift 2;;
    --warm) WARM=$2; shift 2;;
    --rate) RATE=$2; shift 2;;
    -c) CONNS=$2; shift 2;;
    --lease) LEASE=$2; shift 2;;
    --variants) VARIANTS=$2; shift 2;;
    --gateway-jar) GW_JAR=$(realpath "$2"); shift 2;;
    --quiet-wait) QUIET_WAIT=$2; shift 2;;
    --max-foreign) MAX_FOREIGN=$2; shift 2;;
    --quick) REPS=1; D=3; WARM=3; QUIET_WAIT=0; shift;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d'; exit 0;;
    *) echo "unknown option $1" >&2; exit 2;;
  esac
done
for v in $VARIANTS; do case $v in none|local|global) ;; *) echo "unknown variant $v (none local global)" >&2; exit 2;; esac; done
[[ $REPS =~ ^[0-9]+$ && $D =~ ^[0-9]+$ && $WARM =~ ^[0-9]+$ && $RATE =~ ^[0-9]+$ && $CONNS =~ ^[0-9]+$ && $LEASE =~ ^[0-9]+$ \
   && $D -ge 1 && $D -le 300 && $WARM -le 300 && $REPS -le 20 && $CONNS -ge 1 && $RATE -ge $CONNS && $LEASE -ge 1 && $LEASE -le 100000 ]] \
  || { echo "bad --reps/-D/--warm/--rate/-c/--lease" >&2; exit 2; }
(( RATE % CONNS == 0 )) || { echo "--rate must be a multiple of -c (h2load's --rps is per connection)" >&2; exit 2; }
mkdir -p "$OUT/raw" "$OUT/run"
OUT=$(realpath "$OUT")
RUN=$OUT/run
HZ=$(getconf CLK_TCK)
declare -A PID_OF=()
# shellcheck source=lib/bench-common.sh
. "$ROOT/gateway-bench/scripts/lib/bench-common.sh"

need_pkg h2load nghttp2-client || { echo "h2load is needed (apt-get install -y nghttp2-client)" >&2; exit 1; }
need_pkg nginx nginx-light || { echo "nginx is needed for the backend" >&2; exit 1; }
if [[ " $VARIANTS " == *" global "* ]]; then
  need_pkg redis-server redis-server && command -v redis-cli >/dev/null || { echo "redis-server and redis-cli are needed for 'global'" >&2; exit 1; }
fi
[ -f "$GW_JAR" ] || { echo "build first: ./mvnw -B -q -pl gateway-server -am package -DskipTests" >&2; exit 1; }
require_free_ports 18080 16390 29086 29087 29088 29916 29917 29918
trap cleanup EXIT

# ---- configs -----------------------------------------------------------------------------------
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
  default_type application/octet-stream;
  server { listen 127.0.0.1:18080 backlog=4096; location / { return 200 "$(body 128 b)"; } }
}
EOF
port_of() { case $1 in none) echo 29086;; local) echo 29087;; global) echo 29088;; esac; }
admin_of() { case $1 in none) echo 29916;; local) echo 29917;; global) echo 29918;; esac; }
gw_config() { # variant
  local rl=""
  case $1 in
    local) rl=',
  "rate_limit": { "rules": [ { "name": "all", "max_tokens": 16000000, "tokens_per_fill": 16000000, "fill_interval": "1s" } ] }';;
    global) rl=',
  "rate_limit": { "redis": { "address": "127.0.0.1:16390", "lease_size": '"$LEASE"' },
                  "rules": [ { "name": "all", "max_tokens": 16000000, "tokens_per_fill": 16000000, "fill_interval": "1s", "global": true } ] }';;
  esac
  cat >"$RUN/gw-$1.json" <<EOF
{
  "listeners": [ { "name": "bench", "address": "127.0.0.1", "port": $(port_of "$1"), "routes": [{ "cluster": "backend" }],
                   "http": { "x_forwarded": false } } ],
  "clusters": [ { "name": "backend", "hosts": ["127.0.0.1:18080"] } ],
  "admin": { "enabled": true, "port": $(admin_of "$1") },
  "transport": { "worker_threads": 1 }$rl
}
EOF
}

# ---- the fleet ---------------------------------------------------------------------------------
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
start backend 1 nginx -c "$RUN/backend.conf" -p "$RUN"
if [[ " $VARIANTS " == *" global "* ]]; then
  start redis 1 redis-server --port 16390 --bind 127.0.0.1 --save '' --appendonly no --dir "$RUN"
  wait_port 16390
fi
for v in $VARIANTS; do gw_config "$v"; start "gw-$v" 0 java $GW_JAVA_OPTS -jar "$GW_JAR" -c "$RUN/gw-$v.json"; done
wait_port 18080
for v in $VARIANTS; do wait_port "$(port_of "$v")" || true; done

downs() { if [ "$1" = global ] && [ -f "$RUN/gw-global.log" ]; then awk '/is down/ {n++} END {print n + 0}' "$RUN/gw-global.log"; else echo 0; fi; } # Redis-down log lines so far
redis_cmds() { [ -n "${PID_OF[redis]:-}" ] && redis-cli -p 16390 INFO stats 2>/dev/null | tr -d '\r' | awk -F: '$1 == "total_commands_processed" {print $2}' || echo 0; }
metric() { # variant name-and-labels-prefix -> the sum of matching samples of the gateway's /metrics
  curl -s --max-time 5 "http://127.0.0.1:$(admin_of "$1")/metrics" 2>/dev/null | awk -v m="$2" 'index($0, m) == 1 { s += $NF } END { print s + 0 }'
}
load_cmd() { # port seconds [log-file]
  echo "h2load --h1 -t1 -c$CONNS --rps $(( RATE / CONNS )) -D $2 ${3:+--log-file=$3} http://127.0.0.1:$1/"
}
h2_pcts() { # h2load log file -> "p50 p99" in µs (third column: microseconds until the end of the response)
  [ -s "$1" ] || { echo "- -"; return; }
  cut -f3 "$1" | sort -n | awk '{ v[NR] = $1 } END { i50 = int(NR * 0.50); i99 = int(NR * 0.99); if (i50 < 1) i50 = 1; if (i99 < 1) i99 = 1; print v[i50], v[i99] }'
}

printf 'variant\trep\tattempt\trps\tsucceeded\tnon2xx\tp50_us\tp99_us\tgw_ticks\tgw_cpu_s_per_10k\tgw_cpu_pct\tredis_cmds_per_s\tleases_per_s\tlimited\tforeign_cpu_pct\twall_s\tclean\n' >"$OUT/runs.tsv"

measure() { # variant rep attempt
  local v=$1 rep=$2 att=$3 pid=${PID_OF[gw-$1]} raw b0 b1 p0 p1 o0 o1 t0 t1 r0 r1 l0 l1 q0 q1 ct log
  raw="$OUT/raw/$v-rep$rep$( [ "$att" -gt 0 ] && echo "-retry$att").txt"; log="$RUN/h2load-$v.log"
  local d0 d1; d0=$(downs "$v")
  r0=$(redis_cmds); l0=$(metric "$v" sluice_ratelimit_redis_leases_total); q0=$(metric "$v" 'sluice_ratelimit_requests_total{result="limited"')
  b0=$(busy); p0=$(ticks "$pid"); o0=$(all_ours); t0=$(date +%s.%N)
  run_counted 1 timeout $(( D + 60 )) $(load_cmd "$(port_of "$v")" "$D" "$log") >"$raw" 2>&1 || true
  t1=$(date +%s.%N); b1=$(busy); p1=$(ticks "$pid"); o1=$(all_ours)
  d1=$(downs "$v")
  r1=$(redis_cmds); l1=$(metric "$v" sluice_ratelimit_redis_leases_total); q1=$(metric "$v" 'sluice_ratelimit_requests_total{result="limited"')
  ct=$(awk '/^CLIENTTICKS/ {print $2}' "$raw"); ct=${ct:-0}
  local rps ok bad p50 p99
  rps=$(awk '/^finished in/ { gsub(/,/, ""); print $4; exit }' "$raw")
  ok=$(awk '/^status codes:/ { gsub(/,/, ""); print $3; exit }' "$raw")
  bad=$(awk '/^status codes:/ { gsub(/,/, ""); print $5 + $7 + $9; exit } /^requests:/ { gsub(/,/, ""); f = $10 + $12 + $14 }' "$raw")
  read -r p50 p99 <<<"$(h2_pcts "$log")"; rm -f "$log"
  local row clean
  row=$(awk -v w0="$t0" -v w1="$t1" -v hz="$HZ" -v pt=$(( p1 - p0 )) -v ot=$(( o1 - o0 )) -v ct="$ct" -v bt=$(( b1 - b0 )) \
            -v ok="${ok:-0}" -v mf="$MAX_FOREIGN" -v rc=$(( ${r1:-0} - ${r0:-0} )) -v lc="$(awk -v a="$l0" -v b="$l1" 'BEGIN {print b - a}')" \
            'BEGIN { w = w1 - w0; f = 100 * (bt - ot - ct) / hz / w; if (f < 0) f = 0;
      printf "%d\t%.4f\t%.1f\t%.0f\t%.0f\t%.1f\t%.1f\t%d", pt, (ok > 0 ? pt / hz * 10000 / ok : 0), 100 * pt / hz / w, rc / w, lc / w, f, w, (f <= mf) }')
  local c_pt c_10k c_pct c_rc c_lc c_fo c_w
  IFS=$'\t' read -r c_pt c_10k c_pct c_rc c_lc c_fo c_w clean <<<"$row"
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$v" "$rep" "$att" "${rps:-0}" "${ok:-0}" "${bad:-0}" \
      "${p50//-/}" "${p99//-/}" "$c_pt" "$c_10k" "$c_pct" "$c_rc" "$c_lc" "$(awk -v a="$q0" -v b="$q1" 'BEGIN {print b - a}')" $(( d1 - d0 )) "$c_fo" "$c_w" "$clean" >>"$OUT/runs.tsv"
  [ $(( d1 - d0 )) -eq 0 ] || log "WARN $v: the gateway marked Redis down $(( d1 - d0 )) time(s) during the run (no answer within the 50 ms timeout?): see $RUN/gw-global.log"
  log "$(printf '%-6s rep%s %8s req/s  ok %s  non-2xx %s  p50 %s us  p99 %s us  gateway %s CPU-s per 10k req (%s%% of a core)  redis %s cmd/s  leases %s/s  foreign %s%%%s' \
      "$v" "$rep" "${rps:-0}" "${ok:-0}" "${bad:-0}" "$p50" "$p99" "$c_10k" "$c_pct" "$c_rc" "$c_lc" "$c_fo" "$( [ "$clean" = 1 ] || echo '  NOISY')")"
  [ "$clean" = 1 ]
}

# ---- warm-up: the same fixed rate, in cycles (warm_cycles), per variant --------------------------
for v in $VARIANTS; do
  code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 10 "http://127.0.0.1:$(port_of "$v")/" || echo 000)
  [ "$code" = 200 ] || log "WARN gateway $v answered $code to the first request (see $RUN/gw-$v.log)"
  warm_cycles "$v" taskset -c 1 $(load_cmd "$(port_of "$v")" {})
done

# ---- the matrix ----------------------------------------------------------------------------------
n=$(wc -w <<<"$VARIANTS")
for rep in $(seq 1 "$REPS"); do
  for i in $(seq 0 $(( n - 1 ))); do
    v=$(rotated "$i" "$rep" "$VARIANTS")
    quiet_gate
    att=0
    until measure "$v" "$rep" "$att" || [ "$att" -ge 1 ]; do att=$(( att + 1 )); quiet_gate; done
  done
done

{
  meta_host
  echo "gateway: $GW_JAR ($(cd "$ROOT" && git rev-parse --short HEAD 2>/dev/null)$(cd "$ROOT" && git diff --quiet 2>/dev/null || echo '+dirty')), java $GW_JAVA_OPTS, $(java -version 2>&1 | head -1)"
  echo "backend: nginx 1 worker (128-byte body), CPU 1; redis: $(redis-server --version 2>/dev/null | head -1), CPU 1; gateways on CPU 0, one event loop each"
  echo "load: $(load_cmd PORT "$D") on CPU 1 ($RATE req/s in total), $REPS interleaved repetitions, warm-up ${WARM}s per variant"
  echo "rule: max_tokens = tokens_per_fill = 16000000 per 1s (never limits); global: lease_size $LEASE"
} >"$OUT/meta.txt"

# ---- summary: medians over clean runs (all runs when none is clean), ratios paired by repetition ----
awk -F'\t' 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
  { k = $(c["variant"]); r = $(c["rep"]);
    # the last attempt of a repetition counts (a retry replaces a noisy run); clean ones are preferred
    if (!((k, r) in v10) || !cl[k, r]) { v10[k, r] = $(c["gw_cpu_s_per_10k"]); rps[k, r] = $(c["rps"]);
      p99[k, r] = $(c["p99_us"]); rc[k, r] = $(c["redis_cmds_per_s"]); lc[k, r] = $(c["leases_per_s"]); bad[k, r] = $(c["non2xx"]); lim[k, r] = $(c["limited"]); dn[k, r] = $(c["redis_down"]);
      cl[k, r] = $(c["clean"]) }
    if (!(k in order)) { order[k] = ++nk; names[nk] = k } if (r > maxr) maxr = r }
  function med(a, n,   i, j, t) { for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
    return n == 0 ? "-" : (n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2) }
  function col(k, arr,   r, n, a) { n = 0; for (r = 1; r <= maxr; r++) if ((k, r) in arr) a[++n] = arr[k, r]; return med(a, n) }
  function ratio(x, y,   r, n, a) { n = 0; for (r = 1; r <= maxr; r++) if ((x, r) in v10 && (y, r) in v10 && v10[y, r] > 0) a[++n] = v10[x, r] / v10[y, r]; return med(a, n) }
  END {
    print "### Gateway CPU per 10 000 requests at a fixed rate (medians over repetitions)\n"
    print "| variant | reps | req/s | p99 | gateway CPU-s per 10k req | vs none | vs local | Redis commands/s | Redis leases/s | non-2xx | limited | Redis down |"
    print "|---|---|---|---|---|---|---|---|---|---|---|---|"
    for (i = 1; i <= nk; i++) { k = names[i]; n = 0; for (r = 1; r <= maxr; r++) if ((k, r) in v10) n++
      vn = ("none" in order) ? ratio(k, "none") : "-"; vl = ("local" in order) ? ratio(k, "local") : "-"
      b = 0; l = 0; d = 0; for (r = 1; r <= maxr; r++) { b += bad[k, r]; l += lim[k, r]; d += dn[k, r] }
      printf "| %s | %d | %.0f | %s | %.4f | %s | %s | %.0f | %.0f | %d | %d | %d |\n", k, n, col(k, rps), (col(k, p99) == "" ? "-" : col(k, p99) " µs"),
        col(k, v10), (vn == "-" ? "-" : sprintf("%.3f×", vn)), (vl == "-" ? "-" : sprintf("%.3f×", vl)), col(k, rc), col(k, lc), b, l, d; anybad += b + l + d }
    if (("global" in order) && ("local" in order)) {
      g = ratio("global", "local"); printf "\nglobal / local (c/b, paired by repetition, median): **%.3f×** — issue #17 asks for < 1.05×\n", g }
    if (anybad) print "\n**WARNING**: some requests were not 2xx or were limited: or Redis was marked down (no answer within 50 ms): the figures include 429s / fail-open requests (raise --lease; see the header of ratelimit-cost.sh; measure on a quiet machine)"
  }' "$OUT/runs.tsv" >"$OUT/summary.md"
cat "$OUT/summary.md"
log "results in $OUT"
