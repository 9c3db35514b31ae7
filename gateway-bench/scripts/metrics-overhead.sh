#!/usr/bin/env bash
# What recording metrics costs: two gateways from the same jar, one with "admin.metrics": true and
# one with false (config/bench/metrics-{on,off}.json), both pinned to CPU 0; a backend nginx
# (1 worker, 128-byte body, ports 18180-18182) and wrk pinned to CPU 1. wrk runs against them
# alternately (on, off, on, off, ...); per run: requests/s from wrk and the gateway's CPU per
# request (utime+stime from /proc/PID/stat over the run, divided by the requests wrk completed).
#
# usage: gateway-bench/scripts/metrics-overhead.sh [-r REPS] [-d SECS] [-w WARMUP_SECS] [-c CONNS] [-o OUTDIR]
# Needs: nginx, wrk, taskset; the jar built (./mvnw -B -q -pl gateway-server -am package -DskipTests).
# Starts everything it needs and stops it by PID. 127.0.0.1 only.
set -euo pipefail
REPS=5 DUR=10 WARM=20 CONNS=64 OUT=
while getopts r:d:w:c:o: opt; do
  case $opt in r) REPS=$OPTARG;; d) DUR=$OPTARG;; w) WARM=$OPTARG;; c) CONNS=$OPTARG;; o) OUT=$OPTARG;;
    *) sed -n 2,12p "$0"; exit 2;; esac
done
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
JAR=$ROOT/gateway-server/target/sluice.jar
[ -f "$JAR" ] || { echo "build the jar first: ./mvnw -B -q -pl gateway-server -am package -DskipTests" >&2; exit 2; }
RUN=$(mktemp -d /tmp/metrics-overhead.XXXXXX)
OUT=${OUT:-$RUN}
mkdir -p "$OUT"
# shellcheck source=lib/bench-common.sh
. "$ROOT/gateway-bench/scripts/lib/bench-common.sh"
declare -A PID_OF=()
trap cleanup EXIT
for port in 18180 18181 18182 29181 29182 29911 29912; do
  if (exec 3<>/dev/tcp/127.0.0.1/$port) 2>/dev/null; then echo "port $port is taken; not starting" >&2; exit 2; fi
done

BODY=$(printf 'b%.0s' $(seq 128))
cat > "$RUN/nginx.conf" <<NGX
worker_processes 1; daemon off; master_process off; pid $RUN/nginx.pid; error_log $RUN/nginx.err warn;
events { worker_connections 8192; use epoll; }
http {
  access_log off; keepalive_requests 10000000; keepalive_timeout 300s;
  client_body_temp_path $RUN/b; proxy_temp_path $RUN/p; fastcgi_temp_path $RUN/f; uwsgi_temp_path $RUN/u; scgi_temp_path $RUN/s;
  server { listen 127.0.0.1:18180; listen 127.0.0.1:18181; listen 127.0.0.1:18182; location / { return 200 "$BODY"; } }
}
NGX
start nginx 1 nginx -c "$RUN/nginx.conf"
declare -A GW
for m in on off; do
  start "gw-$m" 0 java -XX:ActiveProcessorCount=1 -Xmx256m -jar "$JAR" -c "$ROOT/config/bench/metrics-$m.json"
  GW[$m]=${PID_OF[gw-$m]}
done
for port in 18180 29181 29182; do
  for _ in $(seq 100); do (exec 3<>/dev/tcp/127.0.0.1/$port) 2>/dev/null && break; sleep 0.1; done
done
port() { [ "$1" = on ] && echo 29181 || echo 29182; }
echo "warm-up ${WARM}s each" >&2
for m in on off; do taskset -c 1 wrk -t1 -c"$CONNS" -d"${WARM}s" "http://127.0.0.1:$(port $m)/128" > /dev/null; done
printf 'rep\tmetrics\treq_per_s\tcpu_us_per_req\tp99\n' | tee "$OUT/runs.tsv"
for r in $(seq "$REPS"); do
  order="on off"; [ $((r % 2)) -eq 0 ] && order="off on"
  for m in $order; do
    t0=$(proc_ticks "${GW[$m]}")
    res=$(taskset -c 1 wrk -t1 -c"$CONNS" -d"${DUR}s" --latency "http://127.0.0.1:$(port $m)/128")
    t1=$(proc_ticks "${GW[$m]}")
    reqs=$(echo "$res" | awk '/requests in/ {print $1}')
    rps=$(echo "$res" | awk '/Requests\/sec/ {print $2}')
    p99=$(echo "$res" | awk '$1 == "99%" {print $2}')
    us=$(awk -v t=$((t1 - t0)) -v hz="$HZ" -v n="$reqs" 'BEGIN {printf "%.2f", t / hz * 1e6 / n}')
    printf '%s\t%s\t%s\t%s\t%s\n' "$r" "$m" "$rps" "$us" "$p99" | tee -a "$OUT/runs.tsv"
  done
done
python3 - "$OUT/runs.tsv" <<'PY' | tee "$OUT/summary.txt"
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1]), delimiter='\t'))
def med(m, k): return statistics.median(float(r[k]) for r in rows if r['metrics'] == m)
for k in ('req_per_s', 'cpu_us_per_req'):
    on, off = med('on', k), med('off', k)
    print(f"{k}: median on {on:.2f}, off {off:.2f}, on/off {on / off:.3f}")
pairs = {}
for r in rows: pairs.setdefault(r['rep'], {})[r['metrics']] = float(r['cpu_us_per_req'])
print("cpu per request on/off by rep:", ' '.join(f"{p['on'] / p['off']:.3f}" for p in pairs.values()))
PY
curl -s "http://127.0.0.1:29911/metrics" | grep -E '^sluice_requests_total\{.*proxied.*2xx' > "$OUT/metrics-on-sample.txt" || true
