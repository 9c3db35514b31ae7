#!/usr/bin/env bash
# Where the gateway's CPU goes on the Bolt path: the gateway pinned to CPU 0 (one event loop), the
# bolt backend (answering on its I/O threads, as in bolt-peers.sh) and sofaload (or bolt-load) on
# CPU 1, sofaload -c 8 -m 4 -t 2 for D seconds under a JFR recording, then (a second run) under
# `perf stat` for system calls. Prints:
#   - gateway CPU µs per request (utime+stime of /proc/PID/stat over the JFR run),
#   - the hottest methods by JFR execution samples (top frame, and top frame + 2 callers),
#   - allocation by class (jdk.ObjectAllocationSample weights),
#   - system calls per request by kind.
# Writes everything under OUT (default /tmp/bolt-profile-TIMESTAMP). Ports 12200, 12201, 29902.
# usage: bolt-profile.sh [-D SECS] [--gateway-jar JAR] [--out DIR]
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$(pwd)
GW_JAR=$ROOT/gateway-server/target/sluice.jar
BENCH=${BENCH_JAR:-$ROOT/gateway-bench/target/benchmarks.jar}
OUT=/tmp/bolt-profile-$(date +%Y%m%d-%H%M%S)
D=15
while [ $# -gt 0 ]; do
  case $1 in
    -D) D=$2; shift 2;;
    --gateway-jar) GW_JAR=$(realpath "$2"); shift 2;;
    --out) OUT=$2; shift 2;;
    *) sed -n '2,11p' "$0"; exit 2;;
  esac
done
mkdir -p "$OUT"; OUT=$(realpath "$OUT"); RUN=$OUT
# shellcheck source=lib/bench-common.sh
. "$ROOT/gateway-bench/scripts/lib/bench-common.sh"
declare -A PID_OF=()
trap cleanup EXIT
if command -v sofaload >/dev/null; then LOAD=(sofaload -p sofarpc); else LOAD=(java -jar "$BENCH" bolt-load); fi
echo "load generator: ${LOAD[0]}"
cat >"$OUT/gw.json" <<'EOF'
{
  "listeners": [
    { "name": "bolt", "protocol": "bolt", "address": "127.0.0.1", "port": 12200,
      "routes": [{ "match": { "service": "com.alipay.test.TestService:1.0" }, "cluster": "backend" }] }
  ],
  "clusters": [ { "name": "backend", "protocol": "bolt", "hosts": ["127.0.0.1:12201"] } ],
  "admin": { "enabled": true, "port": 29902 },
  "transport": { "worker_threads": 1 }
}
EOF
start backend 1 java -Xms512m -Xmx512m -jar "$BENCH" bolt-server --port 12201 --io-thread
start gateway 0 java -XX:ActiveProcessorCount=1 -Xms256m -Xmx256m -XX:+UseParallelGC -jar "$GW_JAR" -c "$OUT/gw.json"
GW=${PID_OF[gateway]}
for _ in $(seq 150); do ss -Hltn 'sport = :12200' | grep -q . && ss -Hltn 'sport = :12201' | grep -q . && break; sleep 0.2; done
load() { timeout $(( D + 60 )) taskset -c 1 "${LOAD[@]}" -D "$1" -c 8 -m 4 -t 2 sofarpc://127.0.0.1:12200; }
cpu() { proc_ticks "$GW"; }
load 20 >"$OUT/warmup.txt" 2>&1 || true

jcmd $GW JFR.start name=bolt settings=profile 'jdk.ExecutionSample#period=1ms' filename="$OUT/gateway.jfr" >/dev/null
c0=$(cpu)
load "$D" >"$OUT/load-jfr.txt" 2>&1 || true
c1=$(cpu)
jcmd $GW JFR.stop name=bolt >/dev/null
ok=$(sed -n 's/.* \([0-9]*\) succeeded, .*/\1/p' "$OUT/load-jfr.txt" | head -1)
grep -E '^finished|^requests' "$OUT/load-jfr.txt"
echo "gateway CPU: $(awk -v t=$(( c1 - c0 )) -v hz="$HZ" -v ok="${ok:-1}" 'BEGIN { printf "%.1f", t * 1e6 / hz / ok }') us per request (with JFR on)"

jfr print --events jdk.ExecutionSample "$OUT/gateway.jfr" >"$OUT/samples.txt"
echo "== top frames (self), share of execution samples"
awk '/stackTrace = \[/ { getline; sub(/^[ \t]+/, ""); sub(/[ \t]+line:.*/, ""); n[$0]++; tot++ }
     END { for (k in n) printf "%5.1f%%  %s\n", 100 * n[k] / tot, k }' "$OUT/samples.txt" | sort -rn | head -30 | tee "$OUT/top-self.txt"
echo "== top frames with 2 callers"
awk '/stackTrace = \[/ { s = ""; for (i = 0; i < 3; i++) { getline; if ($0 ~ /^[ \t]*\]/) break; l = $0; sub(/^[ \t]+/, "", l); sub(/[ \t]+line:.*/, "", l); s = s (i ? " <- " : "") l } n[s]++; tot++ }
     END { for (k in n) printf "%5.1f%%  %s\n", 100 * n[k] / tot, k }' "$OUT/samples.txt" | sort -rn | head -25 > "$OUT/top-3.txt"
head -25 "$OUT/top-3.txt"
jfr print --events jdk.ObjectAllocationSample "$OUT/gateway.jfr" >"$OUT/alloc.txt" || true
echo "== allocation by class (sampled weight)"
awk '/objectClass = / { c = $3 } /weight = / { w = $3; u = $4; m = (u ~ /kB/ ? 1024 : u ~ /MB/ ? 1048576 : u ~ /GB/ ? 1073741824 : 1); gsub(/[^0-9.]/, "", w); n[c] += w * m; tot += w * m }
     END { for (k in n) printf "%5.1f%%  %s\n", 100 * n[k] / tot, k }' "$OUT/alloc.txt" | sort -rn | head -15 | tee "$OUT/alloc-top.txt"

perf stat -x, -e 'raw_syscalls:sys_enter,syscalls:sys_enter_read,syscalls:sys_enter_recvfrom,syscalls:sys_enter_write,syscalls:sys_enter_sendto,syscalls:sys_enter_writev,syscalls:sys_enter_epoll_wait,syscalls:sys_enter_epoll_pwait,syscalls:sys_enter_epoll_pwait2,syscalls:sys_enter_epoll_ctl,syscalls:sys_enter_futex' \
    -p $GW -o "$OUT/syscalls.perf" -- sleep $(( D + 1 )) & perfpid=$!
sleep 0.5
load "$D" >"$OUT/load-perf.txt" 2>&1 || true
wait $perfpid || true
ok=$(sed -n 's/.* \([0-9]*\) succeeded, .*/\1/p' "$OUT/load-perf.txt" | head -1)
echo "== system calls per request (${ok:-0} requests)"
awk -F, -v ok="${ok:-1}" '$3 ~ /sys/ { gsub(/ /, "", $1); printf "%-36s %8.2f\n", $3, $1 / ok }' "$OUT/syscalls.perf" | tee "$OUT/syscalls.txt"
echo "profile in $OUT"
