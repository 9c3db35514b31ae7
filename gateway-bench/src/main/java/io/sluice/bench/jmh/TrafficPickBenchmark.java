package io.sluice.bench.jmh;

import io.netty.channel.DefaultEventLoop;
import io.sluice.core.cluster.Host;
import io.sluice.core.config.ClusterConfig;
import io.sluice.core.config.HostConfig;
import io.sluice.core.config.LbPolicy;
import io.sluice.core.time.Ticker;
import io.sluice.lb.ClusterBalancer;
import io.sluice.lb.Hashing;
import io.sluice.lb.LbContext;
import io.sluice.lb.WeightedSchedule;
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

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

/**
 * The traffic-management picks (docs/traffic.md): a {@code ring_hash} or {@code maglev} host
 * pick for a precomputed key over 3, 100 and 1000 hosts ({@code hashPick}, from 1 and 4 threads),
 * the hash of a typical key string ({@code hashKey}), and the weighted-cluster pick of a 99/1 split
 * ({@code weightedCluster1t}/{@code 4t}: one shared atomic counter). Scores are average time per
 * operation per thread. The key ring cycles through 1024 precomputed keys, so cache behaviour is that
 * of a varied workload.
 *
 * <p>{@code java -jar gateway-bench/target/benchmarks.jar jmh TrafficPickBenchmark -wi 3 -i 5 -f 1 -prof gc}
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class TrafficPickBenchmark {

    @Param({"3", "100", "1000"})
    public int hosts;

    @Param({"ring_hash", "maglev"})
    public String lb;

    private DefaultEventLoop loop;
    private ClusterBalancer balancer;
    private final long[] keys = new long[1024];
    private final String[] keyText = new String[1024];
    private final WeightedSchedule split = WeightedSchedule.of(new int[] {99, 1});

    /** Per-thread position in the key ring. */
    @State(Scope.Thread)
    public static class Cursor {
        int i;
    }

    @Setup(Level.Trial)
    public void setUp() {
        loop = new DefaultEventLoop();
        List<HostConfig> hs = new ArrayList<>();
        for (int i = 0; i < hosts; i++) {
            hs.add(new HostConfig("10.0." + (i / 250) + "." + (i % 250 + 1), 8080, 1 + i % 7));
        }
        ClusterConfig c = ClusterConfig.builder().name("bench").lb(LbPolicy.parse(lb)).hosts(hs).build();
        balancer = ClusterBalancer.create(c, new LbContext(new EventLoopScheduler(loop, Ticker.system()), new SplittableRandom(1)));
        SplittableRandom r = new SplittableRandom(3);
        for (int i = 0; i < keys.length; i++) {
            keyText[i] = "session-" + Long.toHexString(r.nextLong());
            keys[i] = Hashing.hash(keyText[i]);
        }
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        balancer.close();
        loop.shutdownGracefully(0, 1, TimeUnit.SECONDS);
    }

    @Benchmark
    @Threads(1)
    public Host hashPick1t(Cursor c) {
        return balancer.pick(keys[c.i++ & 1023]);
    }

    @Benchmark
    @Threads(4)
    public Host hashPick4t(Cursor c) {
        return balancer.pick(keys[c.i++ & 1023]);
    }

    @Benchmark
    @Threads(1)
    public long hashKey(Cursor c) {
        return Hashing.hash(keyText[c.i++ & 1023]);
    }

    @Benchmark
    @Threads(1)
    public int weightedCluster1t() {
        return split.next();
    }

    @Benchmark
    @Threads(4)
    public int weightedCluster4t() {
        return split.next();
    }
}
