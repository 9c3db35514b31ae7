package io.sluice.bench;

import io.sluice.bench.bolt.BoltLoad;
import io.sluice.bench.demo.SlowStartDemo;
import io.sluice.bench.http.HttpLoad;
import io.sluice.bench.lb.PickCpu;
import io.sluice.bench.report.PerfReport;
import io.sluice.bench.ws.WsEcho;
import io.sluice.bench.ws.WsLoad;
import org.openjdk.jmh.Main;

import java.util.Arrays;

/**
 * Entry point of {@code benchmarks.jar}: {@code jmh [JMH options]} runs the micro-benchmarks,
 * {@code http-load [wrk-like options] URL} drives HTTP load. Each tool prints its own usage.
 */
public final class BenchMain {

    private static final String USAGE = """
            usage: java -jar benchmarks.jar <tool> [options]
              jmh [JMH options] [regexp]     JMH micro-benchmarks (e.g. jmh HttpProxyBenchmark -f 1 -wi 2 -i 3)
              http-load [-c N] [-t N] [-d 10s] [-R rate] [-w warm-up] [--timeout 2s] [-H 'K: V'] URL
                                             closed-loop HTTP/1.1 load in the manner of wrk
              bolt-load [-D secs | -n N] [--warm-up-time 1s] [--qps N] [-c N] [-t N] [-m N] sofarpc://HOST:PORT
                                             Bolt load with sofaload's options, request and report
              ws-load [-c N] [-t N] [-m in-flight] [-s 1024] [--text] [-d 10s] [-w warm-up] ws://HOST:PORT/ws
                                             WebSocket load: N connections, m messages in flight each, echoes timed
              ws-echo --port N [--threads 1] [--path /ws]
                                             WebSocket echo backend (Netty's server codec) for ws-load
              slow-start-server --port N     demo HTTP server answering with its own port (x-backend-port)
              bolt-server --port N [--io-thread]
                                             demo Bolt backend (real bolt RpcServer) answering sofaload's request;
                                             --io-thread answers on the connection's I/O thread, not bolt's business pool
                                             (a batch decoded from one read goes to bolt's executor once)
              count --port 2046 --total 100  sends requests through the gateway, prints 'port:  8080 count:  17'
              perf-report [--baseline T] DIR turns a scenario script's runs.tsv into summary.md and chart.png
              pick-cpu                       CPU time per load-balancer pick (EdfPickBenchmark's setup, 1 thread)
              bolt-report DIR                perf-report --baseline mosn DIR (scripts/bolt-peers.sh)
            """;

    private BenchMain() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length == 0 || args[0].equals("-h") || args[0].equals("--help")) {
            System.out.print(USAGE);
            return;
        }
        String[] rest = Arrays.copyOfRange(args, 1, args.length);
        switch (args[0]) {
            case "jmh" -> Main.main(rest);
            case "http-load" -> HttpLoad.main(rest);
            case "bolt-load" -> BoltLoad.main(rest);
            case "ws-load" -> WsLoad.main(rest);
            case "ws-echo" -> WsEcho.main(rest);
            case "slow-start-server" -> SlowStartDemo.server(rest);
            case "count" -> SlowStartDemo.count(rest);
            case "bolt-server" -> SlowStartDemo.boltServer(rest);
            case "perf-report" -> PerfReport.main(rest);
            case "pick-cpu" -> PickCpu.main(rest);
            case "bolt-report" -> PerfReport.main(withBaseline("mosn", rest));
            default -> {
                System.err.println("unknown tool: " + args[0]);
                System.err.print(USAGE);
                System.exit(2);
            }
        }
    }

    private static String[] withBaseline(String baseline, String[] args) {
        String[] out = new String[args.length + 2];
        out[0] = "--baseline";
        out[1] = baseline;
        System.arraycopy(args, 0, out, 2, args.length);
        return out;
    }
}
