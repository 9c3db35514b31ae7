#!/usr/bin/env bash
# measure.sh NAME [gateway args...]: the gateway as ./sluice runs it (the launcher's JVM options; JAVA_OPTS
# added after them), pinned to CPU 0 with one worker (gw.json), backends outside the gateway's process:
# nginx (1 KiB on 127.0.0.1:12253) and the kit's bolt-server (12251), started by this script.
# Samples RSS/RssAnon/RssFile (/proc/PID/status), the NMT summary (when JAVA_OPTS turns it on) and the
# Netty pooled allocator's gauges (admin /metrics): idle 2 s after the Bolt port accepts, after
#   bolt-load -D 10 --qps=2000 -c 200 -t 2 -p sofarpc      (the seed's Bolt run)
#   wrk -t1 -c64 -d10s  /  (1 KiB responses)
# and 10 s later (idle again). Appends one line to OUT/results.tsv; NMT and metrics in OUT/NAME-*.txt.
# Env: ROOT (worktree with the built jars), OUT (/tmp/footprint), ORDER ("bolt http", or "http bolt").
set -u
here=$(cd "$(dirname "$0")" && pwd)
ROOT=${ROOT:-$(cd "$here/../../.." && pwd)}   # ROOT=DIR: another tree (a launcher and gateway-server/target/sluice.jar)
B=$ROOT/gateway-bench/target/benchmarks.jar
OUT=${OUT:-/tmp/footprint}; mkdir -p "$OUT"
name=$1; shift
pids=()
cleanup() { for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null; done; wait 2>/dev/null; }
trap cleanup EXIT
ss -Hltn "sport = :12253" | grep -q . || { nginx -c "$here/nginx.conf" -p "$OUT" >"$OUT/nginx.log" 2>&1 & pids+=($!); }
ss -Hltn "sport = :12251" | grep -q . || { taskset -c 1 java -Xmx256m -jar "$B" bolt-server --port 12251 >"$OUT/bolt-server.log" 2>&1 & pids+=($!); }
for i in $(seq 100); do ss -Hltn "sport = :12251" | grep -q . && ss -Hltn "sport = :12253" | grep -q . && break; sleep 0.2; done
t0=$(date +%s%N)
setsid taskset -c 0 "$ROOT/sluice" -c "$here/gw.json" "$@" >"$OUT/gw-$name.log" 2>&1 &
gpid=$!; pids+=($gpid)
for i in $(seq 300); do ss -Hltn "sport = :12250" | grep -q . && break; sleep 0.1; done
t1=$(date +%s%N)
jpid=$(pgrep -P $gpid java || echo $gpid)   # the launcher execs java: same pid
st() { awk '/^(VmRSS|RssAnon|RssFile):/ {printf "%s%d", (n++ ? "/" : ""), int($2/1024)} END {print ""}' /proc/$gpid/status; }
snap() { # label
  st > "$OUT/$name-$1.status"
  cp /proc/$gpid/smaps "$OUT/$name-$1.smaps"
  curl -s --max-time 5 "http://127.0.0.1:29952/metrics" | grep -E '^sluice_netty|^jvm_memory_used_bytes|^jvm_buffer_memory_used|^jvm_threads_live|^jvm_gc_pause_seconds_(count|sum)' > "$OUT/$name-$1.metrics"
  case " ${JAVA_OPTS:-} " in *NativeMemoryTracking*) jcmd $gpid VM.native_memory summary > "$OUT/$name-$1.nmt" 2>&1;; esac
  cat "$OUT/$name-$1.status"
}
sleep 2
idle=$(snap idle)
for phase in ${ORDER:-bolt http}; do
  if [ $phase = bolt ]; then
    taskset -c 1 java -Xmx256m -jar "$B" bolt-load -D 10 --qps=2000 -c 200 -t 2 -p sofarpc sofarpc://127.0.0.1:12250 > "$OUT/$name-bolt.txt" 2>&1
    bolt=$(snap bolt)
  else
    taskset -c 1 wrk -t1 -c64 -d10s --latency http://127.0.0.1:12252/ > "$OUT/$name-http.txt" 2>&1
    http=$(snap http)
  fi
done
sleep 10
after=$(snap after)
brps=$(awk '/[Tt]hroughput|TPS|[Rr]equests\/sec/ {print $2; exit}' "$OUT/$name-bolt.txt")
hrps=$(awk '/Requests\/sec/ {print $2}' "$OUT/$name-http.txt")
printf '%s\tload=%s\tstart_ms=%d\tidle=%s\tbolt=%s\thttp=%s\tafter=%s\tbolt_rps=%s\thttp_rps=%s\topts=%s\n' "$name" "$(cut -d' ' -f1 /proc/loadavg)" \
  $(( (t1-t0)/1000000 )) "$idle" "$bolt" "$http" "$after" "${brps:-?}" "${hrps:-?}" "${JAVA_OPTS:-}" | tee -a "$OUT/results.tsv"
kill -TERM $gpid; wait $gpid 2>/dev/null
