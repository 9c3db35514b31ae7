package io.sluice.core.config;

import java.time.Duration;

/**
 * Passive outlier ejection: a host that fails {@code consecutiveFailures} requests in a row
 * (connect failures, resets, timeouts, and 5xx when {@code count5xx}) is ejected for
 * {@code baseEjectionTime × ejections} (capped at {@code maxEjectionTime}); at most
 * {@code maxEjectionPercent} of a cluster's hosts are ejected at once. The count of ejections that
 * multiplies the time drops by one for every {@code ejectionDecay} the host serves without being
 * ejected (like Envoy's backoff decay), so a host that misbehaved once long ago starts again at base.
 *
 * @param ejectionDecay null = {@code baseEjectionTime}
 */
public record OutlierConfig(int consecutiveFailures, boolean count5xx, Duration baseEjectionTime,
                            Duration maxEjectionTime, int maxEjectionPercent, Duration ejectionDecay) {

    public OutlierConfig {
        Checks.range("consecutive_failures", consecutiveFailures, 1, 1_000_000);
        Checks.positive("base_ejection_time", baseEjectionTime);
        Checks.positive("max_ejection_time", maxEjectionTime);
        if (maxEjectionTime.compareTo(baseEjectionTime) < 0) {
            throw new ConfigException("max_ejection_time", DurationFormat.format(maxEjectionTime),
                    "a duration >= base_ejection_time (" + DurationFormat.format(baseEjectionTime) + ")");
        }
        Checks.range("max_ejection_percent", maxEjectionPercent, 0, 100);
        ejectionDecay = ejectionDecay == null ? baseEjectionTime : ejectionDecay;
        Checks.positive("ejection_decay", ejectionDecay);
    }

    /** With the default decay (one ejection forgiven per {@code baseEjectionTime} in service). */
    public OutlierConfig(int consecutiveFailures, boolean count5xx, Duration baseEjectionTime, Duration maxEjectionTime,
                         int maxEjectionPercent) {
        this(consecutiveFailures, count5xx, baseEjectionTime, maxEjectionTime, maxEjectionPercent, null);
    }

    /** Defaults: 5 consecutive failures, 5xx counted, 30s base, 300s max, at most 10% (at least one host), decay = base. */
    public static OutlierConfig defaults() {
        return builder().build();
    }

    /** A builder with the defaults a config file gets for keys it leaves out. */
    public static Builder builder() {
        return new Builder();
    }

    /** A builder holding this config's values. */
    public Builder toBuilder() {
        Builder b = new Builder();
        b.consecutiveFailures = consecutiveFailures;
        b.count5xx = count5xx;
        b.baseEjectionTime = baseEjectionTime;
        b.maxEjectionTime = maxEjectionTime;
        b.maxEjectionPercent = maxEjectionPercent;
        b.ejectionDecay = ejectionDecay;
        return b;
    }

    /**
     * Builds a {@link OutlierConfig} (defaults: those of {@link #defaults()}). Validation happens in the
     * record's constructor, when {@link #build()} is called.
     */
    public static final class Builder {
        private int consecutiveFailures = 5;
        private boolean count5xx = true;
        private Duration baseEjectionTime = Duration.ofSeconds(30);
        private Duration maxEjectionTime = Duration.ofSeconds(300);
        private int maxEjectionPercent = 10;
        private Duration ejectionDecay;

        private Builder() {
        }

        public Builder consecutiveFailures(int consecutiveFailures) {
            this.consecutiveFailures = consecutiveFailures;
            return this;
        }

        public Builder count5xx(boolean count5xx) {
            this.count5xx = count5xx;
            return this;
        }

        public Builder baseEjectionTime(Duration baseEjectionTime) {
            this.baseEjectionTime = baseEjectionTime;
            return this;
        }

        public Builder maxEjectionTime(Duration maxEjectionTime) {
            this.maxEjectionTime = maxEjectionTime;
            return this;
        }

        public Builder maxEjectionPercent(int maxEjectionPercent) {
            this.maxEjectionPercent = maxEjectionPercent;
            return this;
        }

        public Builder ejectionDecay(Duration ejectionDecay) {
            this.ejectionDecay = ejectionDecay;
            return this;
        }

        public OutlierConfig build() {
            return new OutlierConfig(consecutiveFailures, count5xx, baseEjectionTime, maxEjectionTime, maxEjectionPercent, ejectionDecay);
        }
    }
}
