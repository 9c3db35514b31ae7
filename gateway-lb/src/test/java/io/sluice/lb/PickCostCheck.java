package io.sluice.lb;

import io.sluice.core.cluster.Host;
import io.sluice.core.config.ClusterConfig;
import io.sluice.core.config.HostConfig;
import io.sluice.core.config.SlowStartConfig;
import io.sluice.core.time.Cancellable;
import io.sluice.core.time.Scheduler;
import io.sluice.core.time.Ticker;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A rough, JMH-free look at the cost of {@link ClusterBalancer#pick()} on the real clock (the JMH
 * benchmark lives in gateway-bench). Off by default; run with
 * {@code mvn -o -pl gateway-lb -am verify -Dsluice.perf=true -Dtest=PickCostCheck -Dsurefire.failIfNoSpecifiedTests=false}.
 */
@EnabledIfSystemProperty(named = "sluice.perf", matches = "true")
class PickCostCheck {

    /** The system clock; tasks are dropped (nothing needs to run while measuring). */
    private static final Scheduler REAL_CLOCK = new Scheduler() {
        @Override
        public Ticker ticker() {
            return Ticker.system();
        }

        @Override
        public Cancellable schedule(Runnable task, long delayNanos) {
            return Cancellable.NOOP;
        }
    };

    private static ClusterBalancer balancer(int n, boolean warming) {
        List<HostConfig> hosts = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            hosts.add(HostConfig.parse("10.0." + (i / 250) + "." + (i % 250) + ":80", 1 + i % 3));
        }
        ClusterConfig c = ClusterConfig.builder().name("perf").hosts(hosts)
                .slowStart(SlowStartConfig.of(Duration.ofHours(1))).warmUpAtBoot(warming).build();
        return ClusterBalancer.create(c, new LbContext(REAL_CLOCK, new SplittableRandom(1)));
    }

    private static double nanosPerPick(ClusterBalancer b, int threads, int picks) throws Exception {
        Thread[] t = new Thread[threads];
        long[] sink = new long[threads];
        for (int i = 0; i < threads; i++) {
            int id = i;
            t[i] = new Thread(() -> {
                long x = 0;
                for (int k = 0; k < picks; k++) {
                    Host h = b.pick();
                    x += h.port();
                }
                sink[id] = x;
            });
        }
        long start = Ticker.system().nanoTime();
        for (Thread th : t) {
            th.start();
        }
        for (Thread th : t) {
            th.join();
        }
        long elapsed = Ticker.system().nanoTime() - start;
        assertThat(sink[0]).isPositive();
        return (double) elapsed / picks; // wall time per pick per thread
    }

    @Test
    void measure() throws Exception {
        for (int n : new int[] {3, 100, 1000}) {
            for (boolean warming : new boolean[] {false, true}) {
                for (int threads : new int[] {1, 2, 4}) {
                    ClusterBalancer b = balancer(n, warming);
                    nanosPerPick(b, threads, 2_000_000); // warm-up of the JIT
                    double ns = nanosPerPick(b, threads, 5_000_000);
                    System.out.printf("hosts=%4d warming=%-5s threads=%d  %.1f ns/pick (wall, per thread)%n",
                            n, warming, threads, ns);
                }
            }
        }
    }
}
