#!/usr/bin/env bash
# measure.sh NAME "JVM OPTS" [extra gateway args]  -> one line: name load rss_idle rss_bolt bolt_p99 rss_http http_p99
W=/work/wt/warm-start
B=$W/gateway-bench/target/benchmarks.jar
name=$1; opts=$2; shift 2
cd /tmp/ws
t0=$(date +%s%N)
setsid taskset -c 0 env ${GW_ENV:-X=1} java $opts -jar $W/gateway-server/target/sluice.jar -c gw.json "$@" > gw-$name.log 2>&1 &
pid=$!
for i in $(seq 300); do ss -Hltn "sport = :12250" | grep -q . && break; sleep 0.1; done
t1=$(date +%s%N)
sleep 2
rss() { awk '/^VmRSS/ {print int($2/1024)}' /proc/$pid/status; }
idle=$(rss)
java -Xmx256m -Dbolt-load.per-second=/tmp/ws/ps-$name.tsv -jar $B bolt-load -D 10 --qps=2000 -c 200 -t 2 -p sofarpc sofarpc://127.0.0.1:12250 > bolt-$name.txt 2>&1
rb=$(rss); bp99=$(awk '/99%/ {print $2; exit}' bolt-$name.txt); brps=$(awk '/Requests\/sec|requests\/sec|TPS/ {print $0; exit}' bolt-$name.txt)
java -Xmx256m -jar $B http-load -c 64 -t 2 -d 10s http://127.0.0.1:12252/ > http-$name.txt 2>&1
rh=$(rss); hp99=$(grep -E "^ *99(\.0+)?%" http-$name.txt | head -1 | awk '{print $2}'); hrps=$(awk '/Requests\/sec/ {print $2}' http-$name.txt)
if [[ "$opts" == *NativeMemoryTracking* ]]; then jcmd $pid VM.native_memory summary > nmt-$name.txt 2>&1; fi
first=$(awk -F'\t' 'NR>1 && $1<3 {if ($4>m) m=$4} END {print m+0}' ps-$name.tsv)
echo -e "$name\tload=$(cut -d' ' -f1 /proc/loadavg)\tstart_ms=$(( (t1-t0)/1000000 ))\trss_idle=${idle}M\trss_bolt=${rb}M\tbolt_p99=$bp99\tbolt_first3s_p99_us=$first\trss_http=${rh}M\thttp_p99=$hp99\thttp_rps=$hrps" | tee -a /tmp/ws/results.tsv
kill -TERM $pid; wait $pid 2>/dev/null
