#!/usr/bin/env bash
# Long-connection gateway (the MOSN report's 100 000-connection scenario, sized to this machine):
# many Bolt connections held open through the gateway with 1000 req/s spread over them, to measure
# what an idle connection costs (heap, RSS outside the heap, Netty direct memory) and whether the
# CPU of the 1000 req/s changes with the number of idle connections around them.
#
# The gateway runs with a fixed, pre-touched heap (-Xms = -Xmx, -XX:+AlwaysPreTouch) so its RSS
# grows only with memory outside the heap; heap use is read after a full GC (jcmd GC.run) from the
# admin /metrics. Each point holds N connections (bolt-load -c N -m 1 --qps 1000) for D seconds and
# samples in the middle: established sockets, gateway CPU over 10 s, RSS, old-gen heap, Netty direct
# memory. Per-connection figures are the differences between the largest and the smallest point,
# divided by the difference in connections (so fixed costs and warm-up cancel out). The points run
# twice, interleaved.
#
# Writes OUT/points.tsv and OUT/summary.md. The open-file limit is 20 000 per process here: the
# gateway holds one descriptor per client connection (Bolt upstreams are multiplexed), the load
# generator one per connection, so 9000 is the default top point.
# Ports: 13200 (gateway), 13201 (backend), 29903 (admin). Bounded in time; stops what it started.
#
# usage: long-connections.sh [--out DIR] [--points "1000 5000 9000"] [-D SECS] [--gateway-jar JAR]
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$(pwd)
GW_JAR=$ROOT/gateway-server/target/sluice.jar
BENCH=${BENCH_JAR:-$ROOT/gateway-bench/target/benchmarks.jar}
OUT=/tmp/long-connections-$(date +%Y%m%d-%H%M%S)
POINTS="1000 5000 9000"
D=30
while [ $# -gt 0 ]; do
  case $1 in
    --out) OUT=$2; shift 2;;
    --points) POINTS=$2; shift 2;;
    -D) D=$2; shift 2;;
    --gateway-jar) GW_JAR=$(realpath "$2"); shift 2;;
    -h|--help) sed -n '2,22p' "$0"; exit 0;;
    *) echo "unknown option $1" >&2; exit 2;;
  esac
done
[[ $D =~ ^[0-9]+$ && $D -ge 20 && $D -le 300 ]] || { echo "-D must be 20..300" >&2; exit 2; }
mkdir -p "$OUT/run"; OUT=$(realpath "$OUT"); RUN=$OUT/run
# shellcheck source=lib/bench-common.sh
. "$ROOT/gateway-bench/scripts/lib/bench-common.sh"
for p in 13200 13201 29903; do port_busy "$p" && { echo "port $p in use" >&2; exit 1; }; done
# private copies: a rebuild while this runs must not pull classes out from under the JVMs
cp "$GW_JAR" "$RUN/sluice.jar"; cp "$BENCH" "$RUN/bench.jar"
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true

declare -A PID_OF=()
trap 'cleanup; rm -f "$RUN"/*.jar' EXIT

cat >"$RUN/gw.json" <<EOF
{
  "listeners": [ { "name": "bolt", "protocol": "bolt", "address": "127.0.0.1", "port": 13200,
      "routes": [{ "match": { "service": "com.alipay.test.TestService:1.0" }, "cluster": "backend" }] } ],
  "clusters": [ { "name": "backend", "protocol": "bolt", "hosts": ["127.0.0.1:13201"] } ],
  "admin": { "enabled": true, "port": 29903 },
  "transport": { "worker_threads": 1, "backlog": 16384 }
}
EOF
HEAP=${GW_HEAP:-256m}
start backend - java -Xmx512m -jar "$RUN/bench.jar" bolt-server --port 13201
start gateway - java -XX:ActiveProcessorCount=1 -Xms$HEAP -Xmx$HEAP -XX:+AlwaysPreTouch -XX:+UseParallelGC -jar "$RUN/sluice.jar" -c "$RUN/gw.json"
GP=${PID_OF[gateway]}
for _ in $(seq 100); do curl -sf localhost:29903/ready >/dev/null && break; sleep 0.3; done
metric() { curl -s localhost:29903/metrics | awk -v m="$1" 'index($0, m) == 1 { s += $NF } END { printf "%d", s / 1024 }'; }

printf 'round\tconnections\tcpu_pct\trss_kb\theap_kb\tdirect_kb\treq_per_s\tfailed\n' >"$OUT/points.tsv"
for round in 1 2; do
  for n in $POINTS; do
    start load - java -Xmx2g -jar "$RUN/bench.jar" bolt-load -c "$n" -t 2 -m 1 --qps 1000 -D "$D" sofarpc://127.0.0.1:13200
    sleep $(( D / 2 ))
    est=$(ss -Htn state established "sport = :13200" | wc -l)
    t0=$(proc_ticks "$GP"); w0=$(date +%s%N); sleep 10
    t1=$(proc_ticks "$GP"); w1=$(date +%s%N)
    jcmd "$GP" GC.run >/dev/null; sleep 1
    rss=$(rss_kb "$GP")
    heap=$(metric 'jvm_memory_used_bytes{area="heap"')
    direct=$(metric 'sluice_netty_direct_memory_used_bytes')
    cpu=$(awk -v t=$(( t1 - t0 )) -v hz="$HZ" -v w=$(( w1 - w0 )) 'BEGIN { printf "%.1f", 100 * t / hz / (w / 1e9) }')
    wait "${PID_OF[load]}" 2>/dev/null || true; unset "PID_OF[load]"
    rps=$(sed -n 's/^finished in [^,]*, \([0-9.]*\) req\/s.*/\1/p' "$RUN/load.log"); failed=$(sed -n 's/.* succeeded, \([0-9]*\) failed.*/\1/p' "$RUN/load.log")
    cp "$RUN/load.log" "$OUT/load-$round-$n.txt"
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$round" "$est" "$cpu" "$rss" "$heap" "$direct" "${rps:-0}" "${failed:-?}" >>"$OUT/points.tsv"
    log "round $round: $est connections, gateway CPU $cpu % at ${rps:-?} req/s (failed ${failed:-?}), RSS $rss kB, heap $heap kB, Netty direct $direct kB"
    sleep 3
  done
done

awk -F'\t' 'NR > 1 { n[NR] = $2; c[NR] = $3; r[NR] = $4; h[NR] = $5; d[NR] = $6; rows = NR }
  END {
    lo = 2; hi = 2; for (i = 2; i <= rows; i++) { if (n[i] < n[lo]) lo = i; if (n[i] > n[hi]) hi = i }
    # pair the smallest and largest point of each round
    printf "| round | connections | gateway CPU at 1000 req/s | RSS kB | heap kB (after GC) | Netty direct kB |\n|---|---|---|---|---|---|\n"
    for (i = 2; i <= rows; i++) printf "| %d | %d | %s %% | %d | %d | %d |\n", (i - 2) / (rows - 1) * 2 + 1, n[i], c[i], r[i], h[i], d[i]
    half = (rows - 1) / 2
    for (k = 0; k < 2; k++) {
      a = 2 + k * half; b = a + half - 1; dn = n[b] - n[a]; if (dn <= 0) continue
      rh = (h[b] - h[a]) * 1024 / dn; rr = (r[b] - r[a]) * 1024 / dn; rd = (d[b] - d[a]) * 1024 / dn
      printf "\nround %d, per added connection (%d → %d): heap %.0f B, RSS outside the heap %.0f B, of which Netty direct %.0f B; total %.0f B (%.2f KiB)\n", k + 1, n[a], n[b], rh, rr, rd, rh + rr, (rh + rr) / 1024
    }
  }' "$OUT/points.tsv" >"$OUT/summary.md"
{
  echo; echo "date: $(date -u +%FT%TZ); host: $(nproc) CPUs, kernel $(uname -r); $(java -version 2>&1 | head -1)"
  echo "gateway: java -XX:ActiveProcessorCount=1 -Xms$HEAP -Xmx$HEAP -XX:+AlwaysPreTouch -XX:+UseParallelGC, 1 event loop"
  echo "load: benchmarks.jar bolt-load -c N -t 2 -m 1 --qps 1000 -D $D (sofaload's request); backend: bolt-server (bolt RpcServer)"
} >>"$OUT/summary.md"
cat "$OUT/summary.md"
