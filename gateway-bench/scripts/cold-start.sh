#!/usr/bin/env bash
# Cold start (issue #20): how fast is a freshly started gateway from its first request on?
# For each variant: start the gateway (or nothing, for "direct"), wait until it accepts, wait WAIT s
# more, then run the seed report's command against it —
#   sofaload -D SECS --qps=2000 -c 200 -t 2 -p sofarpc   (the kit's Java bolt-load when sofaload is
#   not on PATH: same flags)
# and record p50/p99/max per second of the run (bolt-load -Dbolt-load.per-second=FILE) plus the
# gateway's RSS at the end. Variants are interleaved REPS times (order rotating), so "warm" and "cold"
# share the machine's load of the same minutes:
#   warm      the standalone jar as shipped: synthetic warm-up before the listener binds (warm_up on)
#   cold      the same jar with --no-warm-up
#   warm-lean the warm-up plus the launcher's lean JVM options (LEAN_OPTS, what ./sluice uses)
#   direct    no proxy (the backend itself): the floor
#   haproxy-l4 when haproxy is installed (mode tcp)
# The gateway runs with GW_JAVA_OPTS (default: the old bench options, heap 256 MiB, ParallelGC) for
# warm/cold, so the warm-up is the only difference; warm-lean adds the JVM options on top.
#
# Writes OUT/per-second/<variant>-<rep>.tsv (second count p50_us p99_us max_us), OUT/runs.tsv (one
# line per run: variant rep load1 rss_kb first5_p99_us all_p99_us all_max_us), OUT/meta.txt.
# Ports: 12200 (gateway), 12201 (backend), 29902 (gateway admin), 31311 (HAProxy). Bounded in time;
# everything started here is stopped by PID on exit.
#
# --quick: one repetition of 5 s per variant, 1 s wait, 2 s of backend warm-up (a smoke test of the script).
# usage: cold-start.sh [--out DIR] [--reps N] [-D SECS] [--wait SECS] [--variants "warm cold warm-lean direct haproxy-l4"] [--quick]
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$(pwd)
GW_JAR=$ROOT/gateway-server/target/sluice.jar
BENCH=${BENCH_JAR:-$ROOT/gateway-bench/target/benchmarks.jar}
OUT=/tmp/cold-start-$(date +%Y%m%d-%H%M%S)
REPS=3
D=60
WAIT=3
VARIANTS="warm cold warm-lean direct haproxy-l4"
BACKEND_WARM=10
GW_JAVA_OPTS=${GW_JAVA_OPTS:-"-XX:ActiveProcessorCount=1 -Xms256m -Xmx256m -XX:+UseParallelGC"}
LEAN_OPTS=${LEAN_OPTS:-$(sed -n "s/^lean_opts=\"\(.*\)\"$/\1/p" "$ROOT/sluice")}
while [ $# -gt 0 ]; do
  case $1 in
    --out) OUT=$2; shift 2;;
    --reps) REPS=$2; shift 2;;
    -D) D=$2; shift 2;;
    --wait) WAIT=$2; shift 2;;
    --variants) VARIANTS=$2; shift 2;;
    --quick) REPS=1; D=5; WAIT=1; BACKEND_WARM=2; shift;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d'; exit 0;;
    *) echo "unknown option $1" >&2; exit 2;;
  esac
done
[[ $REPS =~ ^[0-9]+$ && $D =~ ^[0-9]+$ && $WAIT =~ ^[0-9]+$ && $D -le 300 && $REPS -le 10 ]] || { echo "bad --reps/-D/--wait" >&2; exit 2; }
mkdir -p "$OUT/per-second" "$OUT/run" "$OUT/raw"
OUT=$(realpath "$OUT")
RUN=$OUT/run
declare -A PID_OF=()
# shellcheck source=lib/bench-common.sh
. "$ROOT/gateway-bench/scripts/lib/bench-common.sh"
trap cleanup EXIT
[ -f "$GW_JAR" ] && [ -f "$BENCH" ] || { echo "build first: ./mvnw -B -q -pl gateway-bench -am package -DskipTests" >&2; exit 2; }
if ! command -v haproxy >/dev/null; then VARIANTS=${VARIANTS//haproxy-l4/}; fi

cat >"$RUN/gw.json" <<JSON
{
  "listeners": [ { "name": "bolt", "protocol": "bolt", "address": "127.0.0.1", "port": 12200,
      "routes": [{ "match": { "service": "com.alipay.test.TestService:1.0" }, "cluster": "backend" }] } ],
  "clusters": [ { "name": "backend", "protocol": "bolt", "hosts": ["127.0.0.1:12201"] } ],
  "admin": { "enabled": true, "port": 29902 },
  "transport": { "worker_threads": 1 }
}
JSON
cat >"$RUN/haproxy.cfg" <<CFG
global
  nbthread 1
defaults
  mode tcp
  timeout connect 5s
  timeout client 60s
  timeout server 60s
listen bolt
  bind 127.0.0.1:31311
  server b1 127.0.0.1:12201
CFG

start backend 1 java -Xms512m -Xmx512m -jar "$BENCH" bolt-server --port 12201 --io-thread
wait_port 12201
# the backend itself warms up once (it is not what is measured)
java -Xmx256m -jar "$BENCH" bolt-load -D "$BACKEND_WARM" --qps=2000 -c 200 -t 2 -p sofarpc sofarpc://127.0.0.1:12201 >/dev/null 2>&1 || true

{
  echo "date: $(date -u +%FT%TZ)  host: $(uname -srm), $(nproc) CPUs"
  echo "gateway: $GW_JAR (modified $(date -u -r "$GW_JAR" +%FT%TZ); HEAD $(git rev-parse --short HEAD 2>/dev/null))"
  echo "java: $(java -version 2>&1 | head -1); GW_JAVA_OPTS=$GW_JAVA_OPTS; LEAN_OPTS=$LEAN_OPTS"
  echo "load: bolt-load -D $D --qps=2000 -c 200 -t 2 -p sofarpc, $WAIT s after the port accepts"
} >"$OUT/meta.txt"
printf 'variant\trep\tload1\trss_kb\tfirst5_p99_us\tall_p99_us\tall_max_us\n' >"$OUT/runs.tsv"

port_of() { case $1 in direct) echo 12201;; haproxy-l4) echo 31311;; *) echo 12200;; esac; }

run_one() { # variant rep
  local v=$1 r=$2 port pid=""
  port=$(port_of "$v")
  case $v in
    warm) start gateway 0 java $GW_JAVA_OPTS -jar "$GW_JAR" -c "$RUN/gw.json";;
    cold) start gateway 0 java $GW_JAVA_OPTS -jar "$GW_JAR" -c "$RUN/gw.json" --no-warm-up;;
    warm-lean) start gateway 0 env MALLOC_ARENA_MAX=1 java -XX:ActiveProcessorCount=1 $LEAN_OPTS -jar "$GW_JAR" -c "$RUN/gw.json";;
    haproxy-l4) start gateway 0 haproxy -db -f "$RUN/haproxy.cfg";;
    direct) ;;
  esac
  [ "$v" != direct ] && pid=${PID_OF[gateway]}
  wait_port "$port" || return 0
  sleep "$WAIT"
  local f="$OUT/per-second/$v-$r.tsv"
  java -Xmx256m -Dbolt-load.per-second="$f" -jar "$BENCH" bolt-load -D "$D" --qps=2000 -c 200 -t 2 -p sofarpc \
    "sofarpc://127.0.0.1:$port" >"$OUT/raw/$v-$r.txt" 2>&1 || log "WARN bolt-load failed ($v $r)"
  local rss=0
  [ -n "$pid" ] && rss=$(rss_tree_kb "$pid")
  local load1; load1=$(cut -d' ' -f1 /proc/loadavg)
  local first5 allp99 allmax
  first5=$(awk -F'\t' 'NR>1 && $1<5 {if ($4>m) m=$4} END {print m+0}' "$f" 2>/dev/null || echo 0)
  allp99=$(awk '/99%/ {print $2; exit}' "$OUT/raw/$v-$r.txt")
  allmax=$(awk -F'\t' 'NR>1 {if ($5>m) m=$5} END {print m+0}' "$f" 2>/dev/null || echo 0)
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$v" "$r" "$load1" "$rss" "$first5" "${allp99:-?}" "$allmax" >>"$OUT/runs.tsv"
  log "$v rep $r: load $load1, rss ${rss} kB, worst p99 of seconds 0-4 ${first5} us, max ${allmax} us"
  [ -z "$pid" ] || stop gateway 0.2
  for _ in $(seq 50); do port_busy "$port" || break; sleep 0.2; done
}

set -- $VARIANTS
n=$#
for r in $(seq "$REPS"); do
  # rotate the order every repetition
  order=("$@"); k=$(( (r - 1) % n ))
  for i in $(seq 0 $((n - 1))); do run_one "${order[$(( (i + k) % n ))]}" "$r"; done
done
column -t -s $'\t' "$OUT/runs.tsv" | tee -a "$OUT/log.txt"
log "per-second tables: $OUT/per-second/"
