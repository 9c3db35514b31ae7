package io.sluice.lb;

import io.sluice.core.cluster.Host;
import io.sluice.core.config.HostConfig;
import io.sluice.core.config.SlowStartConfig;
import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

class WeightsTest {

    private static final long S = 1_000_000_000L;

    private static double f(SlowStartConfig c, double seconds) {
        long now = 1000 * S;
        return Weights.slowStartFactor(c, now - (long) (seconds * S), now);
    }

    @Test
    void mosnAnchors() {
        SlowStartConfig ten = new SlowStartConfig(Duration.ofSeconds(10), 1, 0.01);
        assertThat(f(ten, 0)).isEqualTo(0.1); // 1 s floor
        assertThat(f(ten, 5)).isEqualTo(0.5);
        assertThat(f(ten, 10)).isEqualTo(1.0);
        assertThat(f(ten, 11)).isEqualTo(1.0);
        assertThat(f(new SlowStartConfig(Duration.ofSeconds(20), 1, 0.1), 5)).isEqualTo(0.25);
        assertThat(f(new SlowStartConfig(Duration.ZERO, 1, 0.1), 0)).isEqualTo(1.0);
        assertThat(Weights.slowStartFactor(ten, Host.NOT_WARMING, 0)).isEqualTo(1.0);
        assertThat(Weights.slowStartFactor(null, 0, 0)).isEqualTo(1.0);
    }

    @Test
    void thirtySecondWindowTableOfSpec36() {
        SlowStartConfig c = SlowStartConfig.of(Duration.ofSeconds(30));
        assertThat(f(c, 0)).isEqualTo(0.1);
        assertThat(f(c, 3)).isCloseTo(0.1, within(1e-12));
        assertThat(f(c, 5)).isCloseTo(0.167, within(1e-3));
        assertThat(f(c, 10)).isCloseTo(0.333, within(1e-3));
        assertThat(f(c, 15)).isCloseTo(0.5, within(1e-12));
        assertThat(f(c, 20)).isCloseTo(0.667, within(1e-3));
        assertThat(f(c, 30)).isEqualTo(1.0);
    }

    @Test
    void aggressionShapesTheCurve() {
        assertThat(f(new SlowStartConfig(Duration.ofSeconds(30), 0.5, 0.01), 10)).isCloseTo(0.111, within(1e-3));
        assertThat(f(new SlowStartConfig(Duration.ofSeconds(30), 2, 0.01), 10)).isCloseTo(0.577, within(1e-3));
        assertThat(f(new SlowStartConfig(Duration.ofSeconds(30), 4, 0.01), 10)).isCloseTo(0.760, within(1e-3));
    }

    @Test
    void clampHappensOnTheConfiguredWeightOnly() {
        assertThat(Weights.clamp(0)).isEqualTo(1);
        assertThat(Weights.clamp(1000)).isEqualTo(128);
        SlowStartConfig c = SlowStartConfig.of(Duration.ofSeconds(30));
        Host h = new Host(HostConfig.parse("127.0.0.1:1", 1));
        h.warmStartNanos(0);
        // a weight-1 host warming at 10 s of 30 s weighs 1/3, not 1 (MOSN #2305)
        assertThat(Weights.effective(1, h, c, 0, 10 * S)).isCloseTo(1.0 / 3, within(1e-12));
        assertThat(Weights.sanitize(0)).isPositive();
        assertThat(Weights.sanitize(Double.NaN)).isPositive();
        assertThat(Weights.sanitize(Double.POSITIVE_INFINITY)).isFinite();
    }
}
