package io.sluice.bench.jmh;

import org.junit.jupiter.api.Test;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.options.Options;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;

import java.util.Collection;

import static org.assertj.core.api.Assertions.assertThat;

/** One tiny in-process iteration per benchmark, so the benchmarks keep compiling and running. */
class JmhSmokeIT {

    static {
        // in-process runs (forks 0) need no machine-wide lock; a JMH run elsewhere must not fail the suite
        System.setProperty("jmh.ignoreLock", "true");
    }

    @Test
    void proxyRoundTripRunsAndMeasuresSomething() throws Exception {
        Options opts = new OptionsBuilder()
                .include(HttpProxyBenchmark.class.getName() + ".roundTrip")
                .forks(0)
                .warmupIterations(1).warmupTime(TimeValue.milliseconds(200))
                .measurementIterations(1).measurementTime(TimeValue.milliseconds(300))
                .threads(1)
                .shouldFailOnError(true)
                .build();
        Collection<RunResult> results = new Runner(opts).run();
        assertThat(results).hasSize(2); // direct and proxy
        for (RunResult r : results) {
            assertThat(r.getPrimaryResult().getScore()).as(r.getParams().getParam("target")).isPositive();
        }
    }

    @Test
    void edfPickRuns() throws Exception {
        Options opts = new OptionsBuilder()
                .include(EdfPickBenchmark.class.getName() + ".pick2t")
                .param("hosts", "100")
                .forks(0)
                .warmupIterations(0)
                .measurementIterations(1).measurementTime(TimeValue.milliseconds(200))
                .shouldFailOnError(true)
                .build();
        Collection<RunResult> results = new Runner(opts).run();
        assertThat(results).hasSize(2); // warming up or not
        for (RunResult r : results) {
            assertThat(r.getPrimaryResult().getScore()).isPositive();
        }
    }

    @Test
    void breakerCheckRuns() throws Exception {
        Options opts = new OptionsBuilder()
                .include(BreakerCheckBenchmark.class.getName())
                .forks(0)
                .warmupIterations(0)
                .measurementIterations(1).measurementTime(TimeValue.milliseconds(200))
                .shouldFailOnError(true)
                .build();
        Collection<RunResult> results = new Runner(opts).run();
        assertThat(results).hasSize(3); // 1 and 2 threads, and the retry budget
        for (RunResult r : results) {
            assertThat(r.getPrimaryResult().getScore()).isPositive();
        }
    }

    @Test
    void httpCodecExchangeRunsWithBothCodecs() throws Exception {
        Options opts = new OptionsBuilder()
                .include(HttpCodecBenchmark.class.getName() + ".exchange")
                .forks(0)
                .warmupIterations(0)
                .measurementIterations(1).measurementTime(TimeValue.milliseconds(200))
                .threads(1)
                .shouldFailOnError(true)
                .build();
        Collection<RunResult> results = new Runner(opts).run();
        assertThat(results).hasSize(8); // netty and sluice, two requests, with and without X-Forwarded-*
        for (RunResult r : results) {
            assertThat(r.getPrimaryResult().getScore()).isPositive();
        }
    }

    @Test
    void boltCodecBenchmarksRun() throws Exception {
        Options opts = new OptionsBuilder()
                .include(BoltCodecBenchmark.class.getName() + "|" + BoltHeaderLookupBenchmark.class.getName())
                .param("body", "1024")
                .param("entries", "8")
                .forks(0)
                .warmupIterations(0)
                .measurementIterations(1).measurementTime(TimeValue.milliseconds(100))
                .threads(1)
                .shouldFailOnError(true)
                .build();
        Collection<RunResult> results = new Runner(opts).run();
        assertThat(results).hasSize(4 * 2 + 3); // decode, its harness, rewriteRequestId, buildFrame × v1/v2+CRC; three lookups
        for (RunResult r : results) {
            assertThat(r.getPrimaryResult().getScore()).isPositive();
        }
    }
}
