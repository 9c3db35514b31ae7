#!/usr/bin/env bash
# HTTPS side by side: the gateway, nginx and HAProxy terminating TLS with the SAME certificate in
# front of the same backend, in two regimes that are never mixed (docs/tls.md#benchmarks):
#   keepalive   h2load --h1 -c 64 -t 1 over kept-alive connections, 1 KiB: the cost of record
#               encryption per request
#   handshake   ab -c 16 without keep-alive, TLS 1.3: one full handshake per request (ab does not
#               resume sessions): the cost of a handshake. Compare CPU per request, not req/s: ab
#               leaves Nagle on, and with tickets off (as here) the gateway sends nothing after its
#               TLS 1.3 handshake flight until the response (docs/tls.md), so each request waits
#               ~40 ms for a delayed ACK, capping ab's rate (smoke run: 549 vs nginx 1936 in 3 s).
#               Both scenarios are warmed up first (the handshake path too: unwarmed, the JIT's
#               compilations on the proxy's core were counted; docs/perf/2026-11-24-tls.md)
# for two certificates: ECDSA P-256 and RSA 2048 (made here by openssl, in the run directory; no key
# leaves it). Every proxy is forced to TLS 1.3, the same group (x25519) and the same resumption
# policy: tickets and session caches off (full handshakes), so "handshake" measures handshakes.
# Layout as http-peers.sh: the proxy on CPU 0 (one event loop / worker / thread), client and the
# backend nginx on CPU 1. Reported: requests/s and the proxy's CPU per request (utime+stime of
# /proc/PID/stat) — compare CPU, the client is the bottleneck on 2 cores.
#
# Writes OUT/runs.tsv (scenario key target rep requests seconds proxy_cpu_s cpu_us_per_req) and
# OUT/raw/*.txt. Needs the gateway jar (./mvnw -B -q -pl gateway-server -am package -DskipTests),
# h2load (nghttp2-client), nginx, haproxy. Ports: 18090 (backend), 29443 (gateway, admin 29943),
# 28443 (nginx), 28444 (HAProxy). Everything binds 127.0.0.1 and is stopped by PID on exit.
# --warmup SECS (30): length of each warm-up run (a JVM still compiles its handshake path after a
# minute of handshakes, docs/perf/2026-11-24-tls.md).
# usage: https-peers.sh [--out DIR] [--reps N] [-D SECS] [--warmup SECS] [--keys "ecdsa rsa"] [--scenarios "keepalive handshake"]
#                       [--targets "gateway nginx haproxy"] [--gateway-jar JAR] [--quick]
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$(pwd)
GW_JAR=$ROOT/gateway-server/target/sluice.jar
OUT=/tmp/https-peers-$(date +%Y%m%d-%H%M%S)
REPS=3
D=10
WARM=30
KEYS="ecdsa rsa"
SCENARIOS="keepalive handshake"
TARGETS="gateway nginx haproxy"
GW_JAVA_OPTS=${GW_JAVA_OPTS:-"-XX:ActiveProcessorCount=1 -Xms256m -Xmx256m -XX:+UseParallelGC"}
while [ $# -gt 0 ]; do
  case $1 in
    --out) OUT=$2; shift 2;;
    --reps) REPS=$2; shift 2;;
    -D) D=$2; shift 2;;
    --warmup) WARM=$2; shift 2;;
    --keys) KEYS=$2; shift 2;;
    --scenarios) SCENARIOS=$2; shift 2;;
    --targets) TARGETS=$2; shift 2;;
    --gateway-jar) GW_JAR=$(realpath "$2"); shift 2;;
    --quick) REPS=1; D=3; WARM=3; shift;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d'; exit 0;;
    *) echo "unknown option $1" >&2; exit 2;;
  esac
done
[[ $REPS =~ ^[0-9]+$ && $D =~ ^[0-9]+$ && $D -le 120 && $REPS -le 10 && $WARM =~ ^[0-9]+$ && $WARM -ge 1 && $WARM -le 300 ]] \
  || { echo "bad --reps/-D/--warmup" >&2; exit 2; }
mkdir -p "$OUT/raw" "$OUT/run"
OUT=$(realpath "$OUT")
RUN=$OUT/run
declare -A PID_OF=()
# shellcheck source=lib/bench-common.sh
. "$ROOT/gateway-bench/scripts/lib/bench-common.sh"
for c in h2load ab nginx openssl; do command -v $c >/dev/null || { echo "$c is needed" >&2; exit 1; }; done
command -v haproxy >/dev/null || { log "haproxy not available: left out"; TARGETS=${TARGETS//haproxy/}; }
[ -f "$GW_JAR" ] || { [[ " $TARGETS " != *" gateway "* ]] || { echo "build first: ./mvnw -B -q -pl gateway-server -am package -DskipTests" >&2; exit 1; }; }
require_free_ports 18090 29443 29943 28443 28444
trap cleanup EXIT

# ---- certificates (one self-signed leaf per key type, same chain length everywhere) -------------
certs() { # key-type
  local k=$1 d=$RUN/$1
  mkdir -p "$d"
  if [ "$k" = rsa ]; then openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$d/key.pem" 2>/dev/null
  else openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$d/key.pem" 2>/dev/null; fi
  openssl req -x509 -new -key "$d/key.pem" -out "$d/cert.pem" -days 2 -subj /CN=bench.test \
    -addext "subjectAltName=DNS:bench.test,IP:127.0.0.1" 2>/dev/null
  cat "$d/cert.pem" "$d/key.pem" >"$d/haproxy.pem"
}

# ---- configs ------------------------------------------------------------------------------------
backend() {
  cat >"$RUN/backend.conf" <<EOF
worker_processes 1; daemon off; pid $RUN/backend.pid; error_log $RUN/backend.err warn;
events { worker_connections 8192; }
http { access_log off; keepalive_requests 10000000; keepalive_timeout 300s;
  client_body_temp_path $RUN/bb; proxy_temp_path $RUN/bp; fastcgi_temp_path $RUN/bf; uwsgi_temp_path $RUN/bu; scgi_temp_path $RUN/bs;
  server { listen 127.0.0.1:18090 backlog=4096; location / { return 200 "$(body 1024 a)"; } } }
EOF
  start backend 1 nginx -c "$RUN/backend.conf" -e "$RUN/backend.err"; wait_port 18090
}
gw_config() { # key-type
  cat >"$RUN/gw-$1.json" <<EOF
{ "listeners": [ { "name": "https", "address": "127.0.0.1", "port": 29443, "routes": [{ "cluster": "b" }],
    "http": { "x_forwarded": false },
    "tls": { "certificates": [ { "cert_chain": "$RUN/$1/cert.pem", "private_key": "$RUN/$1/key.pem" } ],
             "protocols": ["TLSv1.3"], "session_tickets": false, "watch_files": false } } ],
  "clusters": [ { "name": "b", "hosts": ["127.0.0.1:18090"] } ],
  "admin": { "enabled": true, "port": 29943 }, "transport": { "worker_threads": 1 } }
EOF
}
nginx_config() { # key-type
  cat >"$RUN/nginx-$1.conf" <<EOF
worker_processes 1; daemon off; pid $RUN/nginx.pid; error_log $RUN/nginx.err warn;
events { worker_connections 8192; use epoll; }
http { access_log off; keepalive_requests 10000000; keepalive_timeout 300s;
  client_body_temp_path $RUN/nb; proxy_temp_path $RUN/np; fastcgi_temp_path $RUN/nf; uwsgi_temp_path $RUN/nu; scgi_temp_path $RUN/ns;
  upstream b { server 127.0.0.1:18090; keepalive 1024; }
  server { listen 127.0.0.1:28443 ssl backlog=4096;
    ssl_certificate $RUN/$1/cert.pem; ssl_certificate_key $RUN/$1/key.pem;
    ssl_protocols TLSv1.3; ssl_ecdh_curve X25519; ssl_session_tickets off; ssl_session_cache off;
    location / { proxy_pass http://b; proxy_http_version 1.1; proxy_set_header Connection ""; } } }
EOF
}
haproxy_config() { # key-type
  cat >"$RUN/haproxy-$1.cfg" <<EOF
global
    nbthread 1
    maxconn 8000
    tune.ssl.cachesize 0
defaults
    mode http
    option http-keep-alive
    http-reuse always
    timeout connect 5s
    timeout client 60s
    timeout server 60s
frontend fe
    bind 127.0.0.1:28444 ssl crt $RUN/$1/haproxy.pem ssl-min-ver TLSv1.3 curves X25519 no-tls-tickets
    default_backend be
backend be
    server s0 127.0.0.1:18090
EOF
}
port_of() { case $1 in gateway) echo 29443;; nginx) echo 28443;; haproxy) echo 28444;; esac; }
launch() { # target key-type
  case $1 in
    gateway) gw_config "$2"; start gateway 0 java $GW_JAVA_OPTS -jar "$GW_JAR" -c "$RUN/gw-$2.json";;
    nginx) nginx_config "$2"; start nginx 0 nginx -c "$RUN/nginx-$2.conf" -e "$RUN/nginx.err";;
    haproxy) haproxy_config "$2"; start haproxy 0 haproxy -db -f "$RUN/haproxy-$2.cfg";;
  esac
  wait_port "$(port_of "$1")"
}
load() { # scenario port out
  case $1 in
    keepalive) timeout $(( D + 30 )) taskset -c 1 h2load --h1 -t 1 -c 64 -D "$D" --tls13-ciphers TLS_AES_128_GCM_SHA256 \
                 "https://127.0.0.1:$2/" >"$3" 2>&1 || true;;
    handshake) timeout $(( D + 60 )) taskset -c 1 ab -q -r -f TLS1.3 -c 16 -t "$D" -n 100000000 \
                 "https://127.0.0.1:$2/" >"$3" 2>&1 || true;;
  esac
}

printf 'scenario\tkey\ttarget\trep\trequests\tseconds\tproxy_cpu_s\tcpu_us_per_req\n' >"$OUT/runs.tsv"
backend
for key in $KEYS; do
  certs "$key"
  for rep in $(seq "$REPS"); do
    for t in $TARGETS; do
      launch "$t" "$key"
      D=$WARM load keepalive "$(port_of "$t")" /dev/null # warm-up: JIT, pools
      # the handshake path warms up too: unwarmed, its JIT compilations ran on the proxy's core
      # inside the measured handshake run (counted as the proxy's CPU)
      [[ " $SCENARIOS " != *" handshake "* ]] || D=$WARM load handshake "$(port_of "$t")" /dev/null
      for s in $SCENARIOS; do
        raw=$OUT/raw/$s-$key-$t-$rep.txt
        c0=$(ticks "${PID_OF[$t]}"); s0=$(date +%s.%N)
        load "$s" "$(port_of "$t")" "$raw"
        c1=$(ticks "${PID_OF[$t]}"); s1=$(date +%s.%N)
        n=$(awk '/^requests:/ {print $8} /^Complete requests:/ {c = $3} /^Failed requests:/ {print c - $3}' "$raw" | head -1)
        n=${n:-0}
        cpu=$(awk -v a="$c0" -v b="$c1" -v hz="$HZ" 'BEGIN {printf "%.3f", (b - a) / hz}')
        per=$(awk -v c="$cpu" -v n="$n" 'BEGIN {printf "%.1f", (n > 0 ? c * 1e6 / n : 0)}')
        secs=$(awk -v a="$s0" -v b="$s1" 'BEGIN {printf "%.2f", b - a}')
        printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$s" "$key" "$t" "$rep" "$n" "$secs" "$cpu" "$per" >>"$OUT/runs.tsv"
        log "$s $key $t rep $rep: $n requests succeeded in ${secs}s, proxy CPU ${cpu}s = ${per} µs/request"
      done
      stop "$t"
    done
  done
done
column -t "$OUT/runs.tsv" | tee "$OUT/summary.txt"
