#!/usr/bin/env bash
# Bolt benchmark on loopback, the sofaload report's two runs: fixed rate (2000 req/s, 200
# connections, 10 s) and maximum throughput (-c 8 -m 4), each direct to the backend and through
# the gateway pinned to CPU 0 (backend, answering on its I/O threads, and load generator on CPU 1).
# Prints each run's report and the gateway's CPU time per request. Uses sofaload when it is on PATH, else our bolt-load.
# Needs the jars (./mvnw -B -DskipTests package); ports 12200, 12201 and 29902 free.
set -euo pipefail
cd "$(dirname "$0")/../.."
GW=gateway-server/target/sluice.jar
BENCH=gateway-bench/target/benchmarks.jar
OUT=${OUT:-/tmp/bolt-bench-$(date +%Y%m%d-%H%M%S)}
D=${D:-10}
mkdir -p "$OUT"
RUN=$OUT
# shellcheck source=lib/bench-common.sh
. gateway-bench/scripts/lib/bench-common.sh
declare -A PID_OF=()
trap cleanup EXIT
if command -v sofaload >/dev/null; then LOAD=(sofaload -p sofarpc); echo "load generator: sofaload"
else LOAD=(java -jar "$BENCH" bolt-load); echo "load generator: bolt-load (sofaload not on PATH)"; fi
start backend 1 java -Xmx512m -jar "$BENCH" bolt-server --port 12201 --io-thread
start gateway 0 java -XX:ActiveProcessorCount=1 -Xmx256m -jar "$GW" -c config/bench/bolt-bench.json
GWPID=${PID_OF[gateway]}
for i in $(seq 100); do curl -s -o /dev/null http://127.0.0.1:29902/ready && break; sleep 0.2; done
sleep 2
cpu() { proc_ticks "$GWPID"; }
run() { # name port args...
  local name=$1 port=$2; shift 2
  local c0; c0=$(cpu)
  taskset -c 1 "${LOAD[@]}" "$@" "sofarpc://127.0.0.1:$port" > "$OUT/$name.txt" 2>&1 || true
  local c1; c1=$(cpu)
  local ok; ok=$(sed -n 's/.* \([0-9]*\) succeeded.*/\1/p' "$OUT/$name.txt" | head -1)
  echo "== $name"; grep -E "finished in|requests:|   50%|   99%" "$OUT/$name.txt"
  if [ "$port" = 12200 ] && [ -n "$ok" ] && [ "$ok" -gt 0 ]; then
    echo "gateway CPU: $(( (c1 - c0) * 1000000 / HZ / ok )) us per request ($(( c1 - c0 )) ticks)"
  fi
}
# warm-up of the gateway's JIT
taskset -c 1 "${LOAD[@]}" -D 10 -c 8 -m 4 -t 1 sofarpc://127.0.0.1:12200 > /dev/null 2>&1 || true
run direct-max 12201 -D "$D" --warm-up-time=1s -c 8 -m 4 -t 2
run gateway-max 12200 -D "$D" --warm-up-time=1s -c 8 -m 4 -t 2
run direct-2000qps 12201 -D "$D" --qps=2000 -c 200 -t 2
run gateway-2000qps 12200 -D "$D" --qps=2000 -c 200 -t 2
echo "reports in $OUT"
