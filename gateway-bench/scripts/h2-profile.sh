#!/usr/bin/env bash
# Where the gateway's CPU and allocation go on the HTTP/2 path (issue #21): the gateway pinned to
# CPU 0 (one event loop), the backend nginx and h2load on CPU 1, the MOSN HTTP/2 scenario
# (h2load -t1 -c5 -m100, POST 1 KiB to /1k), the gateway's upstream either HTTP/1.1 (--mode h1,
# the default) or h2c (--mode h2c, upstream_protocol h2c). Three measured runs after a warm-up:
#   1. JFR (profile settings, 1 ms execution samples): gateway CPU µs per request, hottest frames,
#      allocation by class, and bytes allocated per request (jdk.ThreadAllocationStatistics, every
#      thread, start and end of the recording);
#   2. async-profiler when AP_LIB points at libasyncProfiler.so (Maven Central
#      tools.profiler:async-profiler:4.1:jar:linux-x64, unzipped; never committed): CPU
#      (event=itimer) and allocation, collapsed stacks and the top self frames;
#   3. `perf stat` on the syscall tracepoints: system calls per request by kind.
# A busy machine distorts the µs per request; shares, bytes and syscalls per request hold.
# Writes everything under OUT (default /tmp/h2-profile-TIMESTAMP). Ports 18080, 18090, 29080, 29901.
# usage: h2-profile.sh [--mode h1|h2c] [-D SECS] [--gateway-jar JAR] [--out DIR]
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$(pwd)
GW_JAR=$ROOT/gateway-server/target/sluice.jar
OUT=/tmp/h2-profile-$(date +%Y%m%d-%H%M%S)
D=10
MODE=h1
AP_LIB=${AP_LIB:-}
while [ $# -gt 0 ]; do
  case $1 in
    -D) D=$2; shift 2;;
    --mode) MODE=$2; shift 2;;
    --gateway-jar) GW_JAR=$(realpath "$2"); shift 2;;
    --out) OUT=$2; shift 2;;
    *) sed -n '2,16p' "$0"; exit 2;;
  esac
done
[[ $MODE == h1 || $MODE == h2c ]] || { echo "--mode h1|h2c" >&2; exit 2; }
[[ $D =~ ^[0-9]+$ && $D -le 120 ]] || { echo "bad -D" >&2; exit 2; }
mkdir -p "$OUT"; OUT=$(realpath "$OUT"); RUN=$OUT
# shellcheck source=lib/bench-common.sh
. "$ROOT/gateway-bench/scripts/lib/bench-common.sh"
declare -A PID_OF=()
trap cleanup EXIT
for p in 18080 18090 29080 29901; do port_busy $p && { echo "port $p in use" >&2; exit 1; }; done
head -c 1024 /dev/zero | tr '\0' q >"$RUN/1k.bin"
BODY=$(head -c 1024 /dev/zero | tr '\0' a)
cat >"$RUN/backend.conf" <<EOF
worker_processes 1;
daemon off;
pid $RUN/backend.pid;
error_log $RUN/backend.err warn;
events { worker_connections 8192; use epoll; }
http {
  access_log off; client_body_temp_path $RUN/b_body; proxy_temp_path $RUN/b_proxy; fastcgi_temp_path $RUN/b_fcgi;
  uwsgi_temp_path $RUN/b_uwsgi; scgi_temp_path $RUN/b_scgi;
  keepalive_requests 10000000; keepalive_timeout 300s; server_tokens off;
  http2_max_concurrent_streams 1000; http2_max_requests 100000000;
  default_type application/octet-stream;
  server {
    listen 127.0.0.1:18080 backlog=4096;
    listen 127.0.0.1:18090 http2 backlog=4096;
    location / { client_body_buffer_size 16k; return 200 "$BODY"; }
  }
}
EOF
if [ "$MODE" = h2c ]; then CL='"upstream_protocol": "h2c", "hosts": ["127.0.0.1:18090"]'; else CL='"hosts": ["127.0.0.1:18080"]'; fi
cat >"$RUN/gw.json" <<EOF
{
  "listeners": [ { "name": "bench", "address": "127.0.0.1", "port": 29080, "routes": [{ "cluster": "backend" }],
                   "http": { "x_forwarded": false, "http2": { "max_concurrent_streams": 128 } } } ],
  "clusters": [ { "name": "backend", $CL } ],
  "admin": { "enabled": true, "port": 29901 },
  "transport": { "worker_threads": 1 }
}
EOF
start backend 1 nginx -c "$RUN/backend.conf" -p "$RUN"
start gateway 0 java -XX:ActiveProcessorCount=1 -Xms256m -Xmx256m -XX:+UseParallelGC -jar "$GW_JAR" -c "$RUN/gw.json"
GW=${PID_OF[gateway]}
wait_port 18090; wait_port 29080
load() { timeout $(( D + 60 )) taskset -c 1 h2load -t1 -c5 -m100 -D "$1" -d "$RUN/1k.bin" http://127.0.0.1:29080/1k; }
ok_of() { sed -n 's/^requests: .* \([0-9]*\) succeeded, .*/\1/p' "$1" | head -1; }
load 15 >"$OUT/warmup.txt" 2>&1 || true
sleep 2

# 1. JFR
jcmd $GW JFR.start name=h2 settings=profile 'jdk.ExecutionSample#period=1ms' filename="$OUT/gateway.jfr" >/dev/null
c0=$(proc_ticks "$GW")
load "$D" >"$OUT/load-jfr.txt" 2>&1 || true
c1=$(proc_ticks "$GW")
jcmd $GW JFR.stop name=h2 >/dev/null
ok=$(ok_of "$OUT/load-jfr.txt")
grep -E '^finished|^requests' "$OUT/load-jfr.txt"
echo "gateway CPU: $(awk -v t=$(( c1 - c0 )) -v hz="$HZ" -v ok="${ok:-1}" 'BEGIN { printf "%.1f", t * 1e6 / hz / ok }') us per request (JFR on; noisy on a busy machine)" | tee "$OUT/cpu.txt"
jfr print --events jdk.ThreadAllocationStatistics "$OUT/gateway.jfr" >"$OUT/thread-alloc.txt" || true
awk -v ok="${ok:-1}" '/allocated = / { v = $3; gsub(/,/, "", v); u = $4; m = (u ~ /kB/ ? 1024 : u ~ /MB/ ? 1048576 : u ~ /GB/ ? 1073741824 : 1); a = v * m }
     /thread = / { t = $0; sub(/^.*thread = /, "", t); sub(/ \(javaThreadId.*/, "", t); if (!(t in first)) first[t] = a; last[t] = a }
     END { for (t in first) s += last[t] - first[t]; printf "bytes allocated per request: %.0f (all threads, ThreadAllocationStatistics)\n", s / ok }' \
    "$OUT/thread-alloc.txt" | tee -a "$OUT/cpu.txt"
jfr print --events jdk.ExecutionSample "$OUT/gateway.jfr" >"$OUT/samples.txt"
echo "== top frames (self), share of JFR execution samples"
awk '/stackTrace = \[/ { getline; sub(/^[ \t]+/, ""); sub(/[ \t]+line:.*/, ""); n[$0]++; tot++ }
     END { for (k in n) printf "%5.1f%%  %s\n", 100 * n[k] / tot, k }' "$OUT/samples.txt" | sort -rn | head -30 | tee "$OUT/top-self.txt" || true
jfr print --events jdk.ObjectAllocationSample "$OUT/gateway.jfr" >"$OUT/alloc.txt" || true
echo "== allocation by class (sampled weight)"
awk '/objectClass = / { c = $3 } /weight = / { w = $3; u = $4; m = (u ~ /kB/ ? 1024 : u ~ /MB/ ? 1048576 : u ~ /GB/ ? 1073741824 : 1); gsub(/[^0-9.]/, "", w); n[c] += w * m; tot += w * m }
     END { for (k in n) printf "%5.1f%%  %s\n", 100 * n[k] / tot, k }' "$OUT/alloc.txt" | sort -rn | head -20 | tee "$OUT/alloc-top.txt" || true

# 2. async-profiler (optional)
if [ -n "$AP_LIB" ] && [ -f "$AP_LIB" ]; then
  for ev in cpu alloc; do
    if [ $ev = cpu ]; then args="event=itimer,interval=1ms"; else args="event=alloc"; fi
    # the options in inner quotes: jcmd would otherwise split "key=value" pairs itself
    jcmd $GW JVMTI.agent_load "$AP_LIB" "\"start,$args\"" >/dev/null
    load "$D" >"$OUT/load-ap-$ev.txt" 2>&1 || true
    # alloc: weights are bytes (total), cpu: samples
    jcmd $GW JVMTI.agent_load "$AP_LIB" "\"stop,collapsed$([ $ev = alloc ] && echo ,total),file=$OUT/ap-$ev.collapsed\"" >/dev/null
    echo "== async-profiler $ev: top self frames ($(ok_of "$OUT/load-ap-$ev.txt") requests)"
    awk '{ w = $NF; $NF = ""; sub(/ $/, ""); n = split($0, f, ";"); s[f[n]] += w; tot += w }
         END { for (k in s) printf "%5.1f%%  %s\n", 100 * s[k] / tot, k }' "$OUT/ap-$ev.collapsed" | sort -rn | head -30 | tee "$OUT/ap-$ev-top.txt" || true
    [ $ev = alloc ] && awk -v n="$(ok_of "$OUT/load-ap-$ev.txt")" '{ s += $NF } END { printf "bytes allocated per request (async-profiler): %.0f\n", s / (n ? n : 1) }' "$OUT/ap-alloc.collapsed"
  done
fi

# 3. system calls
perf stat -x, -e 'raw_syscalls:sys_enter,syscalls:sys_enter_read,syscalls:sys_enter_recvfrom,syscalls:sys_enter_write,syscalls:sys_enter_sendto,syscalls:sys_enter_writev,syscalls:sys_enter_epoll_wait,syscalls:sys_enter_epoll_pwait,syscalls:sys_enter_epoll_ctl,syscalls:sys_enter_futex' \
    -p $GW -o "$OUT/syscalls.perf" -- sleep $(( D + 1 )) & perfpid=$!
sleep 0.5
load "$D" >"$OUT/load-perf.txt" 2>&1 || true
wait $perfpid || true
ok=$(ok_of "$OUT/load-perf.txt")
echo "== system calls per request (${ok:-0} requests)"
awk -F, -v ok="${ok:-1}" '$3 ~ /sys/ { gsub(/ /, "", $1); printf "%-36s %8.2f\n", $3, $1 / ok }' "$OUT/syscalls.perf" | tee "$OUT/syscalls.txt"
echo "profile in $OUT"
