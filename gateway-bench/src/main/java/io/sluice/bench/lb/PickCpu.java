package io.sluice.bench.lb;

import io.netty.channel.DefaultEventLoop;
import io.sluice.core.config.ClusterConfig;
import io.sluice.core.config.HostConfig;
import io.sluice.core.config.SlowStartConfig;
import io.sluice.core.time.Ticker;
import io.sluice.lb.ClusterBalancer;
import io.sluice.lb.LbContext;
import io.sluice.server.transport.EventLoopScheduler;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

/**
 * The cost of one {@link ClusterBalancer#pick()} in <em>thread CPU time</em>, single thread, on the
 * setup of {@code EdfPickBenchmark} (3/100/1000 hosts with weights 1..7, every host warming up over
 * an hour or none): min over 10 timed rounds of 2 M picks after 5 warm-up rounds. Unlike JMH's wall
 * time, CPU time does not count the time the thread waits for a core, so it stays comparable on a
 * machine that other work shares (cache interference still shows). A sanity figure beside JMH, not
 * a replacement.
 *
 * <p>{@code java -jar gateway-bench/target/benchmarks.jar pick-cpu}; against an older build of the
 * balancer: {@code java -cp old-benchmarks.jar:gateway-bench/target/benchmarks.jar io.sluice.bench.lb.PickCpu}
 */
public final class PickCpu {

    private PickCpu() {
    }

    public static void main(String[] args) {
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        DefaultEventLoop loop = new DefaultEventLoop();
        long sink = 0;
        try {
            for (int hosts : new int[] {3, 100, 1000}) {
                for (boolean warming : new boolean[] {false, true}) {
                    ClusterBalancer b = balancer(loop, hosts, warming);
                    double best = Double.MAX_VALUE;
                    int n = 2_000_000;
                    for (int round = 0; round < 15; round++) {
                        long t0 = mx.getCurrentThreadCpuTime();
                        for (int k = 0; k < n; k++) {
                            sink += b.pick().port();
                        }
                        long t1 = mx.getCurrentThreadCpuTime();
                        if (round >= 5) {
                            best = Math.min(best, (double) (t1 - t0) / n);
                        }
                    }
                    b.close();
                    System.out.printf("hosts=%4d warming=%-5s %6.1f ns CPU per pick%n", hosts, warming, best);
                }
            }
        } finally {
            loop.shutdownGracefully(0, 1, TimeUnit.SECONDS);
        }
        if (sink == 42) {
            System.out.println();
        }
    }

    private static ClusterBalancer balancer(DefaultEventLoop loop, int hosts, boolean warming) {
        List<HostConfig> hs = new ArrayList<>();
        for (int i = 0; i < hosts; i++) {
            hs.add(new HostConfig("10.0." + (i / 250) + "." + (i % 250 + 1), 8080, 1 + i % 7));
        }
        ClusterConfig c = ClusterConfig.of("bench", hs);
        if (warming) {
            c = new ClusterConfig(c.name(), c.protocol(), c.lb(), c.hosts(), c.connectTimeout(), c.responseTimeout(),
                    c.pool(), null, SlowStartConfig.of(Duration.ofHours(1)), null, c.panicThreshold(), true,
                    c.leastRequestChoices(), c.activeRequestBias());
        }
        return ClusterBalancer.create(c, new LbContext(new EventLoopScheduler(loop, Ticker.system()), new SplittableRandom(1)));
    }
}
