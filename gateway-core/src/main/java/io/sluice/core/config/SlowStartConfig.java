package io.sluice.core.config;

import java.time.Duration;

/**
 * Slow-start (warm-up) of hosts that turn healthy or are added: their weight is multiplied by
 * {@code max(minWeight, (max(1s, now - T0) / window) ^ (1 / aggression))} until the window has passed.
 *
 * @param window     length of the warm-up; 0 disables it
 * @param aggression curve shape, > 0 (1 = linear, higher = faster early ramp)
 * @param minWeight  floor of the factor as a fraction in (0, 1] (JSON gives it in percent)
 */
public record SlowStartConfig(Duration window, double aggression, double minWeight) {

    public static final double DEFAULT_AGGRESSION = 1.0;
    public static final double DEFAULT_MIN_WEIGHT = 0.10;

    public SlowStartConfig {
        Checks.nonNegative("window", window);
        if (!(aggression > 0) || Double.isInfinite(aggression)) {
            throw new ConfigException("aggression", aggression, "a finite number > 0");
        }
        if (!(minWeight > 0) || minWeight > 1) {
            throw new ConfigException("min_weight_percent", minWeight * 100,
                    "a percentage in (0, 100] (0 starves new hosts: Envoy #19526, #29259)");
        }
    }

    public static SlowStartConfig of(Duration window) {
        return new SlowStartConfig(window, DEFAULT_AGGRESSION, DEFAULT_MIN_WEIGHT);
    }

    public boolean enabled() {
        return !window.isZero();
    }
}
