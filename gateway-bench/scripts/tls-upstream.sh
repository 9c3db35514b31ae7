#!/usr/bin/env bash
# TLS re-encryption, keep-alive: plain HTTP/1.1 in, TLS to the upstream, through the gateway and
# through nginx (`proxy_pass https://` with `proxy_ssl_*`), in front of the same HTTPS backend.
# Both proxies verify the backend's certificate against the same CA, send the same SNI
# (backend.bench) and check that name, speak TLS 1.3 only and keep upstream connections alive, so
# after the first requests the cost measured is record encryption/decryption per request, not
# handshakes (docs/tls-upstream.md; the "keep-alive" regime of the TLS spec).
#
# Layout ("pinned", as http-peers.sh): each proxy on CPU 0 with one worker (the gateway with one
# event loop, nginx with 1 worker); the client (wrk -t1 -c64, 1 KiB bodies) and the backend nginx
# (1 worker, HTTPS on 127.0.0.1:18443) on CPU 1. A "gateway-plain" row (the gateway to a cleartext
# backend on 18080) gives the cost of the TLS hop by difference.
# Certificates: an ECDSA P-256 CA and a leaf for backend.bench + 127.0.0.1, made by openssl in the
# run directory for this run (no key leaves it).
#
# Each (target) runs REPS times, rotating the order. Every run records the proxy's CPU (utime+stime
# of /proc/PID/stat) per request and its peak RSS. Writes OUT/runs.tsv, OUT/raw/*.txt, OUT/meta.txt.
# Needs the gateway jar (./mvnw -B -q -pl gateway-server -am package -DskipTests), nginx, wrk, openssl.
# Ports: 18080 (cleartext backend), 18443 (HTTPS backend), 29080 / 29083 (gateway TLS / plain),
# 29901 / 29903 (their admin), 28080 (nginx). Everything binds 127.0.0.1, is bounded in time and is
# stopped by PID on exit.
# usage: tls-upstream.sh [--out DIR] [--reps N] [-D SECS] [--warm SECS] [--targets "gateway nginx gateway-plain"]
#                        [--gateway-jar JAR] [--quick]
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$(pwd)
GW_JAR=$ROOT/gateway-server/target/sluice.jar
OUT=/tmp/tls-upstream-$(date +%Y%m%d-%H%M%S)
REPS=3
D=10
WARM=20
WARM_LONG=0
TARGETS="gateway nginx gateway-plain"
MAX_FOREIGN=15
QUIET_WAIT=30
GW_JAVA_OPTS=${GW_JAVA_OPTS:-"-XX:ActiveProcessorCount=1 -Xms256m -Xmx256m -XX:+UseParallelGC"}
while [ $# -gt 0 ]; do
  case $1 in
    --out) OUT=$2; shift 2;;
    --reps) REPS=$2; shift 2;;
    -D) D=$2; shift 2;;
    --warm) WARM=$2; shift 2;;
    --targets) TARGETS=$2; shift 2;;
    --gateway-jar) GW_JAR=$(realpath "$2"); shift 2;;
    --quick) REPS=1; D=2; WARM=0; QUIET_WAIT=0; shift;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d'; exit 0;;
    *) echo "unknown option $1" >&2; exit 2;;
  esac
done
[[ $REPS =~ ^[0-9]+$ && $D =~ ^[0-9]+$ && $WARM =~ ^[0-9]+$ && $WARM -le 300 && $D -le 120 && $REPS -le 10 ]] || { echo "bad --reps/-D/--warm" >&2; exit 2; }
mkdir -p "$OUT/raw" "$OUT/run"
OUT=$(realpath "$OUT")
RUN=$OUT/run
HZ=$(getconf CLK_TCK)
declare -A PID_OF=()
# shellcheck source=lib/bench-common.sh
. "$ROOT/gateway-bench/scripts/lib/bench-common.sh"

for c in nginx wrk openssl java; do command -v $c >/dev/null || { echo "$c is needed" >&2; exit 1; }; done
[ -f "$GW_JAR" ] || { echo "build first: ./mvnw -B -q -pl gateway-server -am package -DskipTests" >&2; exit 1; }
require_free_ports 18080 18443 29080 29083 29901 29903 28080
trap cleanup EXIT

# ---- certificates (ECDSA P-256, this run only) ---------------------------------------------------
pki() {
  local d=$RUN/pki; mkdir -p "$d"
  openssl ecparam -name prime256v1 -genkey -noout -out "$d/ca.key" 2>/dev/null
  openssl req -x509 -new -key "$d/ca.key" -sha256 -days 2 -subj "/CN=sluice bench CA" -out "$d/ca.pem" 2>/dev/null
  openssl ecparam -name prime256v1 -genkey -noout -out "$d/backend.key" 2>/dev/null
  openssl req -new -key "$d/backend.key" -subj "/CN=backend.bench" -out "$d/backend.csr" 2>/dev/null
  printf 'subjectAltName=DNS:backend.bench,IP:127.0.0.1\nbasicConstraints=CA:FALSE\n' >"$d/ext.cnf"
  openssl x509 -req -in "$d/backend.csr" -CA "$d/ca.pem" -CAkey "$d/ca.key" -CAcreateserial -days 2 -sha256 \
      -extfile "$d/ext.cnf" -out "$d/backend.pem" 2>/dev/null
}

# ---- configs (body, nginx_temp_paths: lib/bench-common.sh) ---------------------------------------
backend_config() {
  cat >"$RUN/backend.conf" <<EOF
worker_processes 1;
daemon off;
pid $RUN/backend.pid;
error_log $RUN/backend.err warn;
worker_rlimit_nofile 16384;
events { worker_connections 8192; use epoll; }
http {
  access_log off;
  $(nginx_temp_paths b)
  keepalive_requests 10000000; keepalive_timeout 300s; server_tokens off;
  default_type application/octet-stream;
  ssl_protocols TLSv1.3;
  ssl_certificate $RUN/pki/backend.pem;
  ssl_certificate_key $RUN/pki/backend.key;
  ssl_session_tickets on;
  server {
    listen 127.0.0.1:18080 backlog=4096;
    listen 127.0.0.1:18443 ssl backlog=4096;
    location / { return 200 "$(body 1024 a)"; }
  }
}
EOF
}
gw_config() { # file port admin-port tls(0/1)
  local cluster
  if [ "$4" = 1 ]; then
    cluster="\"hosts\": [\"127.0.0.1:18443\"], \"tls\": { \"ca_file\": \"$RUN/pki/ca.pem\", \"sni\": \"backend.bench\", \"protocols\": [\"TLSv1.3\"] }"
  else
    cluster="\"hosts\": [\"127.0.0.1:18080\"]"
  fi
  cat >"$1" <<EOF
{
  "listeners": [ { "name": "bench", "address": "127.0.0.1", "port": $2, "routes": [{ "cluster": "backend" }],
                   "http": { "x_forwarded": false } } ],
  "clusters": [ { "name": "backend", $cluster } ],
  "admin": { "enabled": true, "port": $3 },
  "transport": { "worker_threads": 1 }
}
EOF
}
nginx_config() {
  cat >"$RUN/nginx.conf" <<EOF
worker_processes 1;
daemon off;
pid $RUN/nginx.pid;
error_log $RUN/nginx.err warn;
worker_rlimit_nofile 16384;
events { worker_connections 8192; use epoll; }
http {
  access_log off;
  $(nginx_temp_paths n)
  keepalive_requests 10000000; keepalive_timeout 300s; server_tokens off;
  upstream backend { server 127.0.0.1:18443; keepalive 1024; keepalive_requests 10000000; keepalive_timeout 300s; }
  server {
    listen 127.0.0.1:28080 backlog=4096;
    location / {
      proxy_pass https://backend; proxy_http_version 1.1; proxy_set_header Connection "";
      proxy_ssl_protocols TLSv1.3; proxy_ssl_verify on; proxy_ssl_trusted_certificate $RUN/pki/ca.pem;
      proxy_ssl_name backend.bench; proxy_ssl_server_name on; proxy_ssl_session_reuse on;
    }
  }
}
EOF
}
port_of() { case $1 in gateway) echo 29080;; gateway-plain) echo 29083;; nginx) echo 28080;; esac; }
load_cmd() { echo "wrk -t1 -c64 -d${1}s --latency http://127.0.0.1:$2/"; }

# ---- measurement (to_us: lib/bench-common.sh) ----------------------------------------------------
printf 'target\trep\trps\trequests\terrors\tp50_us\tp99_us\tproxy_us_per_req\tproxy_cpu_pct\trss_kb\twall_s\n' >"$OUT/runs.tsv"
measure() { # target rep
  local t=$1 rep=$2 pids=${PID_OF[$1]} raw="$OUT/raw/$1-rep$2.txt" p0 p1 t0 t1 rps reqs errs p50 p99 rss
  p0=$(ticks $pids); t0=$(date +%s.%N)
  timeout $(( D + 60 )) taskset -c 1 $(load_cmd "$D" "$(port_of "$t")") >"$raw" 2>&1 || true
  t1=$(date +%s.%N); p1=$(ticks $pids); rss=$(rss_tree_kb $pids)
  rps=$(awk '/^Requests\/sec/ {print $2}' "$raw"); reqs=$(awk '/requests in/ {print $1; exit}' "$raw")
  errs=$(awk '/Socket errors/ {gsub(/,/, ""); e += $4 + $6 + $8 + $10} /Non-2xx/ {e += $5} END {print e + 0}' "$raw")
  p50=$(to_us "$(awk '$1 == "50%" {print $2; exit}' "$raw")"); p99=$(to_us "$(awk '$1 == "99%" {print $2; exit}' "$raw")")
  awk -v t="$t" -v rep="$rep" -v rps="${rps:-0}" -v n="${reqs:-0}" -v e="$errs" -v p50="${p50:-}" -v p99="${p99:-}" \
      -v pt=$(( p1 - p0 )) -v hz="$HZ" -v w0="$t0" -v w1="$t1" -v rss="$rss" 'BEGIN { w = w1 - w0; ok = n - e;
      printf "%s\t%s\t%s\t%d\t%d\t%s\t%s\t%.1f\t%.1f\t%s\t%.1f\n", t, rep, rps, n, e, p50, p99, (ok > 0 ? pt * 1e6 / hz / ok : 0),
             100 * pt / hz / w, rss, w }' | tee -a "$OUT/runs.tsv" >&2
}

ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
pki
backend_config
start backend 1 nginx -c "$RUN/backend.conf" -p "$RUN"
wait_port 18443
has() { [[ " $TARGETS " == *" $1 "* ]]; }
if has gateway; then gw_config "$RUN/gw.json" 29080 29901 1; start gateway 0 java $GW_JAVA_OPTS -jar "$GW_JAR" -c "$RUN/gw.json"; fi
if has gateway-plain; then gw_config "$RUN/gw-plain.json" 29083 29903 0; start gateway-plain 0 java $GW_JAVA_OPTS -jar "$GW_JAR" -c "$RUN/gw-plain.json"; fi
if has nginx; then nginx_config; start nginx 0 nginx -c "$RUN/nginx.conf" -p "$RUN"; fi
for t in $TARGETS; do wait_port "$(port_of "$t")" || true; done
for t in $TARGETS; do
  # one request first: a broken TLS setup shows as an error here, not as a fast run of 502s
  code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 10 "http://127.0.0.1:$(port_of "$t")/" || echo 000)
  [ "$code" = 200 ] || { log "WARN $t answered $code to the first request (see $RUN/$t.log)"; }
  warm_cycles "$t" taskset -c 1 $(load_cmd {} "$(port_of "$t")")
done
n=$(wc -w <<<"$TARGETS")
for rep in $(seq 1 "$REPS"); do
  for i in $(seq 0 $(( n - 1 ))); do
    t=$(rotated "$i" "$rep" "$TARGETS")
    quiet_gate
    measure "$t" "$rep"
  done
done
{
  meta_host
  echo "gateway: $GW_JAR ($(git rev-parse --short HEAD 2>/dev/null)), java $GW_JAVA_OPTS, $(java -version 2>&1 | head -1)"
  echo "nginx: $(nginx -v 2>&1 | head -1), 1 worker, proxy_ssl TLSv1.3 verify on, session reuse on, upstream keepalive 1024"
  echo "backend: nginx 1 worker on CPU 1, TLSv1.3, ECDSA P-256 leaf; client: $(load_cmd "$D" PORT) on CPU 1; proxies on CPU 0"
  echo "reps $REPS, ${D}s each, warm-up ${WARM}s per target"
} >"$OUT/meta.txt"
log "results in $OUT (runs.tsv: proxy_us_per_req is the number to compare)"
