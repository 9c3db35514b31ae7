#!/usr/bin/env bash
# Where a TLS handshake's CPU goes in the gateway, native frames included, next to nginx in the same
# run (docs/perf/2026-11-25-tls-handshake.md). For each key type and mode:
#   full     ab -c 16 without keep-alive: one full handshake per request (ab never resumes)
#   resumed  8 x openssl s_time -reuse in parallel (--resume-clients): each client one connection
#            at a time, each connection resuming that client's first session by ticket and sending
#            one request (tickets on in both proxies). One client alone leaves the proxy idle between
#            connections: everything runs cold and both proxies cost about twice as much per handshake
# the gateway is warmed up (--warmup SECS of the same load), then measured for -D SECS while
# async-profiler samples it (event cpu, falling back to itimer where perf events are refused;
# cstack=vm: Java and native frames in one stack), then nginx is measured with the same load.
# Reported: handshakes, the proxy's CPU µs per handshake (utime+stime of /proc/PID/stat; the
# gateway's whole process, JIT and GC included) and gateway/nginx as a ratio of handshakes per
# CPU-second; the profile as collapsed stacks (OUT/profile-*.collapsed, for flame graph tools) and
# a summary of shares: BoringSSL (frames in the tcnative library), kernel, JVM (GC, JIT, runtime)
# and Java, with the top frames (OUT/summary-*.txt).
#
# async-profiler is not part of the repository: the script fetches tools.profiler:async-profiler
# (the jar carries the linux-x64 library) from Maven Central with ./mvnw into a temporary directory
# at every run and attaches it with `jcmd PID JVMTI.agent_load`. Nothing of it is kept.
# Layout as https-peers.sh: the proxy on CPU 0 (one event loop / worker), client and backend on
# CPU 1. Ports 18190 (backend), 29543 (gateway, admin 29993), 28543 (nginx), all on 127.0.0.1.
# Needs the gateway jar (./mvnw -B -q -pl gateway-server -am package -DskipTests), nginx, ab,
# openssl, jcmd, python3.
# usage: tls-profile.sh [--out DIR] [-D SECS] [--warmup SECS] [--keys "ecdsa rsa"] [--modes "full resumed"]
#                       [--tls "1.3 1.2"] [--targets "gateway nginx"] [--gateway-jar JAR] [--no-profile]
#                       [--resume-clients N]
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$(pwd)
GW_JAR=$ROOT/gateway-server/target/sluice.jar
OUT=/tmp/tls-profile-$(date +%Y%m%d-%H%M%S)
D=15
WARM=30
KEYS="ecdsa rsa"
MODES="full resumed"
TLSV="1.3"
TARGETS="gateway nginx"
PROFILE=1
RESUME_CLIENTS=8
AP_VERSION=4.2
GW_JAVA_OPTS=${GW_JAVA_OPTS:-"-XX:ActiveProcessorCount=1 -Xms256m -Xmx256m -XX:+UseParallelGC"}
while [ $# -gt 0 ]; do
  case $1 in
    --out) OUT=$2; shift 2;;
    -D) D=$2; shift 2;;
    --warmup) WARM=$2; shift 2;;
    --keys) KEYS=$2; shift 2;;
    --modes) MODES=$2; shift 2;;
    --tls) TLSV=$2; shift 2;;
    --targets) TARGETS=$2; shift 2;;
    --gateway-jar) GW_JAR=$(realpath "$2"); shift 2;;
    --no-profile) PROFILE=0; shift;;
    --resume-clients) RESUME_CLIENTS=$2; shift 2;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d'; exit 0;;
    *) echo "unknown option $1" >&2; exit 2;;
  esac
done
[[ $D =~ ^[0-9]+$ && $D -ge 1 && $D -le 120 && $WARM =~ ^[0-9]+$ && $WARM -le 300 && $RESUME_CLIENTS =~ ^[0-9]+$ \
   && $RESUME_CLIENTS -ge 1 && $RESUME_CLIENTS -le 64 ]] || { echo "bad -D/--warmup/--resume-clients" >&2; exit 2; }
mkdir -p "$OUT/raw" "$OUT/run"
OUT=$(realpath "$OUT")
RUN=$OUT/run
declare -A PID_OF=()
# shellcheck source=lib/bench-common.sh
. "$ROOT/gateway-bench/scripts/lib/bench-common.sh"
for c in ab nginx openssl python3; do command -v $c >/dev/null || { echo "$c is needed" >&2; exit 1; }; done
[[ " $TARGETS " != *" gateway "* ]] || [ -f "$GW_JAR" ] || { echo "build first: ./mvnw -B -q -pl gateway-server -am package -DskipTests" >&2; exit 1; }
for p in 18190 29543 29993 28543; do port_busy $p && { echo "port $p in use" >&2; exit 1; }; done
AP_DIR=$(mktemp -d)
trap 'cleanup; rm -rf "$AP_DIR"' EXIT
stop() { local p=${PID_OF[$1]:-}; [ -n "$p" ] || return 0; kill -TERM -- "-$p" 2>/dev/null || true
         for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done; kill -KILL -- "-$p" 2>/dev/null || true; unset "PID_OF[$1]"; }

AP_LIB=
if [ $PROFILE = 1 ]; then
  command -v jcmd >/dev/null || { echo "jcmd is needed (or --no-profile)" >&2; exit 1; }
  log "fetching tools.profiler:async-profiler:$AP_VERSION into $AP_DIR (not kept)"
  ./mvnw -B -q -N org.apache.maven.plugins:maven-dependency-plugin:3.6.1:copy \
    -Dartifact=tools.profiler:async-profiler:$AP_VERSION -DoutputDirectory="$AP_DIR" >"$OUT/raw/ap-fetch.txt" 2>&1 \
    || { cat "$OUT/raw/ap-fetch.txt" >&2; echo "could not fetch async-profiler (or use --no-profile)" >&2; exit 1; }
  (cd "$AP_DIR" && unzip -q -o "async-profiler-$AP_VERSION.jar" 'linux-x64/libasyncProfiler.so')
  AP_LIB=$AP_DIR/linux-x64/libasyncProfiler.so
fi
# CPU ticks of a process's JIT compiler threads (counted in the process's CPU, reported apart: a
# JVM still compiles its handshake path after a minute of handshakes)
jit_ticks() { local t sum=0; for t in /proc/"$1"/task/*; do grep -q '^C[12] Compiler' "$t/comm" 2>/dev/null || continue
              sum=$(( sum + $(sed 's/^.*) //' "$t/stat" | awk '{print $12 + $13}') )); done; echo $sum; }
# jcmd's parser would split "a=b,c=d" at '=': the options go in double quotes
ap() { jcmd "$1" JVMTI.agent_load "$AP_LIB" "\"$2\"" >>"$OUT/raw/ap-jcmd.txt" 2>&1; }

certs() { # key-type
  local k=$1 d=$RUN/$1
  mkdir -p "$d"
  if [ "$k" = rsa ]; then openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$d/key.pem" 2>/dev/null
  else openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$d/key.pem" 2>/dev/null; fi
  openssl req -x509 -new -key "$d/key.pem" -out "$d/cert.pem" -days 2 -subj /CN=bench.test \
    -addext "subjectAltName=DNS:bench.test,IP:127.0.0.1" 2>/dev/null
}
backend() {
  cat >"$RUN/backend.conf" <<EOF
worker_processes 1; daemon off; pid $RUN/backend.pid; error_log $RUN/backend.err warn;
events { worker_connections 8192; }
http { access_log off; keepalive_requests 10000000; keepalive_timeout 300s;
  client_body_temp_path $RUN/bb; proxy_temp_path $RUN/bp; fastcgi_temp_path $RUN/bf; uwsgi_temp_path $RUN/bu; scgi_temp_path $RUN/bs;
  server { listen 127.0.0.1:18190 backlog=4096; location / { return 200 "$(head -c 1024 /dev/zero | tr '\0' a)"; } } }
EOF
  start backend 1 nginx -c "$RUN/backend.conf" -e "$RUN/backend.err"; wait_port 18190
}
launch() { # target key tls mode
  local tickets=false ngt=off
  [ "$4" = resumed ] && { tickets=true; ngt=on; }
  case $1 in
    gateway)
      cat >"$RUN/gw.json" <<EOF
{ "listeners": [ { "name": "https", "address": "127.0.0.1", "port": 29543, "routes": [{ "cluster": "b" }],
    "http": { "x_forwarded": false },
    "tls": { "certificates": [ { "cert_chain": "$RUN/$2/cert.pem", "private_key": "$RUN/$2/key.pem" } ],
             "protocols": ["TLSv$3"], "session_tickets": $tickets, "watch_files": false } } ],
  "clusters": [ { "name": "b", "hosts": ["127.0.0.1:18190"] } ],
  "admin": { "enabled": true, "port": 29993 }, "transport": { "worker_threads": 1 } }
EOF
      # Netty unpacks tcnative into a temp file and deletes it after loading: the profiler then
      # cannot read its symbols (BoringSSL's functions). Kept in the run directory instead.
      mkdir -p "$RUN/native"
      start gateway 0 java $GW_JAVA_OPTS -Dio.netty.native.deleteLibAfterLoading=false -Dio.netty.native.workdir="$RUN/native" \
        -jar "$GW_JAR" -c "$RUN/gw.json"; wait_port 29543;;
    nginx)
      cat >"$RUN/nginx.conf" <<EOF
worker_processes 1; daemon off; pid $RUN/nginx.pid; error_log $RUN/nginx.err warn;
events { worker_connections 8192; use epoll; }
http { access_log off; keepalive_requests 10000000; keepalive_timeout 300s;
  client_body_temp_path $RUN/nb; proxy_temp_path $RUN/np; fastcgi_temp_path $RUN/nf; uwsgi_temp_path $RUN/nu; scgi_temp_path $RUN/ns;
  upstream b { server 127.0.0.1:18190; keepalive 1024; }
  server { listen 127.0.0.1:28543 ssl backlog=4096;
    ssl_certificate $RUN/$2/cert.pem; ssl_certificate_key $RUN/$2/key.pem;
    ssl_protocols TLSv$3; ssl_ecdh_curve X25519; ssl_session_tickets $ngt; ssl_session_cache off;
    location / { proxy_pass http://b; proxy_http_version 1.1; proxy_set_header Connection ""; } } }
EOF
      start nginx 0 nginx -c "$RUN/nginx.conf" -e "$RUN/nginx.err"; wait_port 28543;;
  esac
}
port_of() { case $1 in gateway) echo 29543;; nginx) echo 28543;; esac; }
load() { # mode tls port secs out
  case $1 in
    full) timeout $(( $4 + 60 )) taskset -c 1 ab -q -r -f "TLS$2" -c 16 -t "$4" -n 100000000 "https://127.0.0.1:$3/" >"$5" 2>&1 || true;;
    resumed) local i pids=()
             for i in $(seq "$RESUME_CLIENTS"); do
               timeout $(( $4 + 30 )) taskset -c 1 openssl s_time -connect "127.0.0.1:$3" -reuse -time "$4" -www / \
                 "-tls${2/./_}" -CAfile "$RUN/$KEY/cert.pem" >"$5.$i" 2>&1 &
               pids+=($!)
             done
             wait "${pids[@]}" || true
             for i in $(seq "$RESUME_CLIENTS"); do cat "$5.$i"; rm -f "$5.$i"; done >"$5";;
  esac
}
count() { # mode out -> handshakes done
  case $1 in
    full) awk '/^Complete requests:/ {c = $3} /^Failed requests:/ {f = $3} END {print c - f}' "$2";;
    resumed) awk '/ connections in [0-9.]+s;/ {n += $1} END {print n + 0}' "$2";;
  esac
}

printf 'mode\ttls\tkey\ttarget\thandshakes\tseconds\tproxy_cpu_s\tcpu_us_per_handshake\tof_which_jit_us\n' >"$OUT/runs.tsv"
backend
for KEY in $KEYS; do
  certs "$KEY"
  for v in $TLSV; do
    for m in $MODES; do
      for t in $TARGETS; do
        launch "$t" "$KEY" "$v" "$m"
        port=$(port_of "$t")
        [ "$WARM" = 0 ] || load "$m" "$v" "$port" "$WARM" "$OUT/raw/warm-$m-$v-$KEY-$t.txt"
        tag=$m-$v-$KEY
        [ $PROFILE = 1 ] && [ $t = gateway ] && ap "${PID_OF[$t]}" "start,event=cpu,interval=1ms,cstack=vm"
        raw=$OUT/raw/$tag-$t.txt
        c0=$(ticks "${PID_OF[$t]}"); j0=$(jit_ticks "${PID_OF[$t]}"); s0=$(date +%s.%N)
        load "$m" "$v" "$port" "$D" "$raw"
        c1=$(ticks "${PID_OF[$t]}"); j1=$(jit_ticks "${PID_OF[$t]}"); s1=$(date +%s.%N)
        if [ $PROFILE = 1 ] && [ $t = gateway ]; then
          ap "${PID_OF[$t]}" "stop,file=$OUT/profile-$tag.collapsed,collapsed"
        fi
        n=$(count "$m" "$raw"); n=${n:-0}
        [ $PROFILE = 1 ] && [ $t = gateway ] && { python3 "$ROOT/gateway-bench/scripts/lib/profile-shares.py" \
          "$OUT/profile-$tag.collapsed" 25 "$n" >"$OUT/summary-$tag.txt" || true; }
        cpu=$(awk -v a="$c0" -v b="$c1" -v hz="$HZ" 'BEGIN {printf "%.3f", (b - a) / hz}')
        per=$(awk -v c="$cpu" -v n="$n" 'BEGIN {printf "%.1f", (n > 0 ? c * 1e6 / n : 0)}')
        jit=$(awk -v a="$j0" -v b="$j1" -v hz="$HZ" -v n="$n" 'BEGIN {printf "%.1f", (n > 0 ? (b - a) / hz * 1e6 / n : 0)}')
        secs=$(awk -v a="$s0" -v b="$s1" 'BEGIN {printf "%.2f", b - a}')
        printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$m" "$v" "$KEY" "$t" "$n" "$secs" "$cpu" "$per" "$jit" >>"$OUT/runs.tsv"
        log "$m TLS$v $KEY $t: $n handshakes in ${secs}s, proxy CPU ${cpu}s = ${per} µs/handshake, JIT ${jit} of it (load average $(cut -d' ' -f1 /proc/loadavg))"
        stop "$t"
      done
    done
  done
done
# gateway / nginx in handshakes per CPU-second (= nginx µs / gateway µs), per mode, TLS version and key
awk -F'\t' 'NR > 1 {us[$1 FS $2 FS $3 FS $4] = $8; k[$1 FS $2 FS $3] = 1}
  END {for (x in k) if (us[x FS "gateway"] > 0 && us[x FS "nginx"] > 0)
         printf "ratio\t%s\tgateway/nginx handshakes per CPU-second = %.2f\n", x, us[x FS "nginx"] / us[x FS "gateway"]}' \
  "$OUT/runs.tsv" >"$OUT/ratios.tsv"
column -t -s $'\t' "$OUT/runs.tsv" | tee "$OUT/summary.txt"
cat "$OUT/ratios.tsv" | tee -a "$OUT/summary.txt"
