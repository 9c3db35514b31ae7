package io.sluice.bench.jmh;

import io.sluice.core.config.CircuitBreakerConfig;
import io.sluice.server.policy.breaker.CircuitBreaker;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;

import java.util.concurrent.TimeUnit;

/**
 * What a request pays for the circuit breaker when it does not trip: take a slot of the cluster's
 * {@code max_requests} and give it back (what the HTTP and Bolt proxies do per request), from 1 and
 * 2 threads sharing one cluster's breaker (two event loops). Target: &lt; 50 ns per check and
 * 0 B/op ({@code -prof gc}). Scores are average time per check <em>per thread</em>.
 *
 * <p>{@code java -jar gateway-bench/target/benchmarks.jar jmh BreakerCheckBenchmark -wi 3 -i 5 -f 1 -prof gc}
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class BreakerCheckBenchmark {

    private CircuitBreaker breaker;

    @Setup(Level.Trial)
    public void setUp() {
        breaker = new CircuitBreaker("bench", CircuitBreakerConfig.defaults());
    }

    private boolean check() {
        if (!breaker.tryRequest()) {
            return false;
        }
        breaker.requestDone();
        return true;
    }

    @Benchmark
    @Threads(1)
    public boolean check1t() {
        return check();
    }

    @Benchmark
    @Threads(2)
    public boolean check2t() {
        return check();
    }

    /** The retry-budget decision (a retry slot under the budget, then given back). */
    @Benchmark
    @Threads(1)
    public boolean retryBudget1t() {
        if (!breaker.tryRetry()) {
            return false;
        }
        breaker.retryDone();
        return true;
    }
}
