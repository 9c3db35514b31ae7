#!/usr/bin/env bash
# The slow-start demonstration of MOSN v1.5.0's release test, on Sluice (docs/examples/slow-start.md):
# three servers (8080/8081/8082, weights 1:2:3) behind the gateway on 2046; count 100 requests;
# kill 8082, restart it, and count again at 10, 17.5, 26 and 34 s after it turned healthy
# (30 s window): the share of 8082 ramps 25 -> 37 -> 46 -> 50.
# Needs: the jars (./mvnw -B -DskipTests package), curl, ports 2046, 8080-8082 and 34901 free.
set -euo pipefail
cd "$(dirname "$0")/../.."
GW=gateway-server/target/sluice.jar
BENCH=gateway-bench/target/benchmarks.jar
CONFIG=${CONFIG:-config/examples/slow-start/sluice.json}
[ -f "$GW" ] && [ -f "$BENCH" ] || { echo "build first: ./mvnw -B -DskipTests package" >&2; exit 1; }
# shellcheck source=lib/bench-common.sh
. gateway-bench/scripts/lib/bench-common.sh
declare -A PID_OF=()
trap cleanup EXIT
server() { setsid java -Xmx64m -jar "$BENCH" slow-start-server --port "$1" >/dev/null 2>&1 & echo $!; }
healthy() { curl -s http://127.0.0.1:34901/clusters | grep -A3 "\"127.0.0.1:$1\"" | grep -q '"health" : "healthy"'; }
count() { java -jar "$BENCH" count --port 2046 --total 100; }
for p in 8080 8081 8082; do PID_OF[server-$p]=$(server $p); done
setsid java -jar "$GW" -c "$CONFIG" >/tmp/slow-start-gateway.log 2>&1 & PID_OF[gateway]=$!
for i in $(seq 100); do healthy 8080 && healthy 8081 && healthy 8082 && break; sleep 0.2; done
echo "\$ count  # all three servers up since boot"; count
kill "${PID_OF[server-8082]}"
for i in $(seq 50); do healthy 8082 || break; sleep 0.2; done
echo; echo "\$ count  # 8082 killed and marked unhealthy"; count
PID_OF[server-8082]=$(server 8082)
for i in $(seq 100); do healthy 8082 && break; sleep 0.1; done
t0=$(date +%s.%N)
echo; echo "# 8082 restarted and healthy again: slow start begins (30 s window)"
for at in 10 17.5 26 34; do
  now=$(date +%s.%N); wait_s=$(echo "$t0 + $at - $now" | bc)
  if [ "$(echo "$wait_s > 0" | bc)" = 1 ]; then sleep "$wait_s"; fi
  echo; echo "\$ count  # t = ${at} s after recovery"; count
done
