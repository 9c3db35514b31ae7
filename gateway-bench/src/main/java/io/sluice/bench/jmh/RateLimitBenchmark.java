package io.sluice.bench.jmh;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.netty.channel.DefaultEventLoop;
import io.sluice.core.config.ClusterConfig;
import io.sluice.core.config.HostConfig;
import io.sluice.core.config.RateLimitConfig;
import io.sluice.core.config.RateLimitRule;
import io.sluice.core.config.RouteConfig;
import io.sluice.core.config.RouteMatch;
import io.sluice.core.time.Ticker;
import io.sluice.lb.ClusterBalancer;
import io.sluice.lb.LbContext;
import io.sluice.server.policy.ratelimit.RateLimiter;
import io.sluice.server.policy.ratelimit.RouteLimits;
import io.sluice.server.route.Route;
import io.sluice.server.route.RouteTable;
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
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * One local rate-limit decision as the proxy handlers make it (route chosen → {@code rateLimits()}
 * → decide), from 1 and 2 threads sharing the bucket (2 threads: the CAS under contention). Scores
 * are time per decision per thread; target < 50 ns and 0 B/op ({@code -prof gc}).
 * <ul>
 *   <li>{@code allowed}: a rule whose bucket never runs dry (the CAS path, counter increment);</li>
 *   <li>{@code limited}: an empty bucket (read, no write; the "limited" counter);</li>
 *   <li>{@code unmatched}: a rule is configured for another route — the request pays one null check;</li>
 *   <li>{@code none}: no rate_limit section at all (the baseline for {@code unmatched}).</li>
 * </ul>
 *
 * <p>{@code java -jar gateway-bench/target/benchmarks.jar jmh RateLimitBenchmark -wi 3 -i 5 -f 1 -prof gc}
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class RateLimitBenchmark {

    private static final Function<String, String> NO_HEADERS = name -> null;

    @Param({"allowed", "limited", "unmatched", "none"})
    public String scenario;

    private DefaultEventLoop loop;
    private ClusterBalancer balancer;
    private RateLimiter limiter;
    private Route route;

    @Setup(Level.Trial)
    public void setUp() {
        loop = new DefaultEventLoop();
        EventLoopScheduler scheduler = new EventLoopScheduler(loop, Ticker.system());
        balancer = ClusterBalancer.create(ClusterConfig.of("c", List.of(new HostConfig("10.0.0.1", 8080, 1))),
                new LbContext(scheduler, new SplittableRandom(1)));
        RateLimitConfig config = switch (scenario) {
            case "allowed" -> RateLimitConfig.builder().rules(new RateLimitRule("r", List.of("api"), null, null, null,
                    RateLimitRule.MAX_TOKENS, RateLimitRule.MAX_TOKENS, Duration.ofMillis(1), false)).build();
            case "limited" -> RateLimitConfig.builder().rules(RateLimitRule.perRoute("r", 1, Duration.ofHours(1), "api")).build();
            case "unmatched" -> RateLimitConfig.builder().rules(RateLimitRule.perRoute("r", 1, Duration.ofHours(1), "other")).build();
            default -> RateLimitConfig.disabled();
        };
        limiter = RateLimiter.localOnly(new SimpleMeterRegistry(), scheduler);
        limiter.update(config);
        RouteTable table = RouteTable.compile(List.of(
                new RouteConfig("api", RouteMatch.ANY, "c", null, null),
                new RouteConfig("other", RouteMatch.ANY, "c", null, null)), Map.of("c", balancer));
        limiter.attach(table);
        route = table.routes().get(0);
        if (scenario.equals("limited")) {
            route.rateLimits().decideHttp(NO_HEADERS, null); // take the one token
        }
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        limiter.close();
        balancer.close();
        loop.shutdownGracefully(0, 1, TimeUnit.SECONDS);
    }

    private long decide() {
        RouteLimits l = route.rateLimits(); // exactly the handlers' hook
        return l == null ? RouteLimits.ALLOWED : l.decideHttp(NO_HEADERS, null);
    }

    @Benchmark
    @Threads(1)
    public long decide1t() {
        return decide();
    }

    @Benchmark
    @Threads(2)
    public long decide2t() {
        return decide();
    }
}
