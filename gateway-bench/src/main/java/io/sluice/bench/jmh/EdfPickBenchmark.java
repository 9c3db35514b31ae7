package io.sluice.bench.jmh;

import io.netty.channel.DefaultEventLoop;
import io.sluice.core.cluster.Host;
import io.sluice.core.config.ClusterConfig;
import io.sluice.core.config.HostConfig;
import io.sluice.core.config.SlowStartConfig;
import io.sluice.core.time.Ticker;
import io.sluice.lb.ClusterBalancer;
import io.sluice.lb.LbContext;
import io.sluice.server.transport.EventLoopScheduler;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

/**
 * One pick of the cluster's shared EDF scheduler: 3, 100 and 1000 hosts with weights 1..7, with
 * every host warming up (slow start re-evaluates weights on re-queue) or none, from 1, 2 and 4
 * threads at once ({@code pick1t}, {@code pick2t}, {@code pick4t}: the cost of sharing one
 * scheduler per cluster). Scores are average time per pick <em>per thread</em>.
 *
 * <p>{@code java -jar gateway-bench/target/benchmarks.jar jmh EdfPickBenchmark -wi 3 -i 5 -f 1 -prof gc}
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class EdfPickBenchmark {

    @Param({"3", "100", "1000"})
    public int hosts;

    @Param({"false", "true"})
    public boolean warmingUp;

    private DefaultEventLoop loop;
    private ClusterBalancer balancer;

    @Setup(Level.Trial)
    public void setUp() {
        loop = new DefaultEventLoop();
        List<HostConfig> hs = new ArrayList<>();
        for (int i = 0; i < hosts; i++) {
            hs.add(new HostConfig("10.0." + (i / 250) + "." + (i % 250 + 1), 8080, 1 + i % 7));
        }
        ClusterConfig c = ClusterConfig.of("bench", hs);
        if (warmingUp) {
            // a long window, every host warming from boot: each re-queue recomputes the factor
            c = new ClusterConfig(c.name(), c.protocol(), c.lb(), c.hosts(), c.connectTimeout(), c.responseTimeout(),
                    c.pool(), null, SlowStartConfig.of(Duration.ofHours(1)), null, c.panicThreshold(), true,
                    c.leastRequestChoices(), c.activeRequestBias());
        }
        balancer = ClusterBalancer.create(c, new LbContext(new EventLoopScheduler(loop, Ticker.system()), new SplittableRandom(1)));
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        balancer.close();
        loop.shutdownGracefully(0, 1, TimeUnit.SECONDS);
    }

    @Benchmark
    @Threads(1)
    public Host pick1t() {
        return balancer.pick();
    }

    @Benchmark
    @Threads(2)
    public Host pick2t() {
        return balancer.pick();
    }

    @Benchmark
    @Threads(4)
    public Host pick4t() {
        return balancer.pick();
    }
}
