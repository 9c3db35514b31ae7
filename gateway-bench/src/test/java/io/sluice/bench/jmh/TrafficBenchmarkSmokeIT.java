package io.sluice.bench.jmh;

import org.junit.jupiter.api.Test;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;

import java.util.Collection;

import static org.assertj.core.api.Assertions.assertThat;

/** One tiny in-process iteration of {@link TrafficHeadersBenchmark}, so it keeps compiling and running. */
class TrafficBenchmarkSmokeIT {

    static {
        System.setProperty("jmh.ignoreLock", "true");
    }

    @Test
    void plainAndRulesRun() throws Exception {
        Collection<RunResult> results = new Runner(new OptionsBuilder()
                .include(TrafficHeadersBenchmark.class.getName() + ".roundTrip").forks(0)
                .warmupIterations(1).warmupTime(TimeValue.milliseconds(200))
                .measurementIterations(1).measurementTime(TimeValue.milliseconds(300))
                .threads(1).shouldFailOnError(true).build()).run();
        assertThat(results).hasSize(2);
        for (RunResult r : results) {
            assertThat(r.getPrimaryResult().getScore()).isPositive();
        }
    }
}
