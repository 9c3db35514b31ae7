package io.sluice.core.config;

import java.time.Duration;
import java.util.List;

/**
 * Active health checking of a cluster's hosts.
 *
 * @param probe              which probe: {@code tcp}, {@code http}, {@code bolt} or a custom probe's name
 * @param interval           delay between the end of one probe and the start of the next
 * @param timeout            a probe that has not answered by then fails
 * @param intervalJitter     uniform random [0, jitter) added to each interval
 * @param initialDelay       delay before the first probe
 * @param healthyThreshold   consecutive successes that turn an unhealthy host healthy
 * @param unhealthyThreshold consecutive failures that turn a healthy host unhealthy
 * @param httpMethod         HTTP probe method
 * @param httpPath           HTTP probe path
 * @param httpHost           HTTP probe Host header (null = the host's address)
 * @param expectedStatuses   HTTP statuses that pass (default 200..299)
 */
public record HealthCheckConfig(String probe, Duration interval, Duration timeout, Duration intervalJitter,
                                Duration initialDelay, int healthyThreshold, int unhealthyThreshold,
                                String httpMethod, String httpPath, String httpHost,
                                List<StatusRange> expectedStatuses) {

    public static final String TCP = "tcp";
    public static final String HTTP = "http";
    public static final String BOLT = "bolt";

    public HealthCheckConfig {
        Checks.notBlank("probe", probe);
        Checks.positive("interval", interval);
        Checks.positive("timeout", timeout);
        Checks.nonNegative("interval_jitter", intervalJitter);
        Checks.nonNegative("initial_delay", initialDelay);
        Checks.range("healthy_threshold", healthyThreshold, 1, 1000);
        Checks.range("unhealthy_threshold", unhealthyThreshold, 1, 1000);
        httpMethod = httpMethod == null ? "GET" : httpMethod;
        httpPath = httpPath == null ? "/" : httpPath;
        if (!httpPath.startsWith("/")) {
            throw new ConfigException("http.path", httpPath, "a path starting with \"/\"");
        }
        expectedStatuses = expectedStatuses == null || expectedStatuses.isEmpty()
                ? List.of(new StatusRange(200, 299)) : List.copyOf(expectedStatuses);
    }

    /** Defaults: interval 5s, timeout 1s, jitter 0, initial delay 0, thresholds 2 / 3. */
    public static HealthCheckConfig of(String probe) {
        return builder().probe(probe).build();
    }

    public boolean expects(int status) {
        for (StatusRange r : expectedStatuses) {
            if (r.contains(status)) {
                return true;
            }
        }
        return false;
    }

    /** A builder with the defaults a config file gets for keys it leaves out. */
    public static Builder builder() {
        return new Builder();
    }

    /** A builder holding this config's values. */
    public Builder toBuilder() {
        Builder b = new Builder();
        b.probe = probe;
        b.interval = interval;
        b.timeout = timeout;
        b.intervalJitter = intervalJitter;
        b.initialDelay = initialDelay;
        b.healthyThreshold = healthyThreshold;
        b.unhealthyThreshold = unhealthyThreshold;
        b.httpMethod = httpMethod;
        b.httpPath = httpPath;
        b.httpHost = httpHost;
        b.expectedStatuses = expectedStatuses;
        return b;
    }

    /**
     * Builds a {@link HealthCheckConfig} (defaults: a TCP probe, those of {@link #of(String)}; HTTP probes
     * {@code GET /} expecting 2xx). Validation happens in the record's constructor, when {@link #build()}
     * is called.
     */
    public static final class Builder {
        private String probe = TCP;
        private Duration interval = Duration.ofSeconds(5);
        private Duration timeout = Duration.ofSeconds(1);
        private Duration intervalJitter = Duration.ZERO;
        private Duration initialDelay = Duration.ZERO;
        private int healthyThreshold = 2;
        private int unhealthyThreshold = 3;
        private String httpMethod;
        private String httpPath;
        private String httpHost;
        private List<StatusRange> expectedStatuses;

        private Builder() {
        }

        public Builder probe(String probe) {
            this.probe = probe;
            return this;
        }

        public Builder interval(Duration interval) {
            this.interval = interval;
            return this;
        }

        public Builder timeout(Duration timeout) {
            this.timeout = timeout;
            return this;
        }

        public Builder intervalJitter(Duration intervalJitter) {
            this.intervalJitter = intervalJitter;
            return this;
        }

        public Builder initialDelay(Duration initialDelay) {
            this.initialDelay = initialDelay;
            return this;
        }

        public Builder healthyThreshold(int healthyThreshold) {
            this.healthyThreshold = healthyThreshold;
            return this;
        }

        public Builder unhealthyThreshold(int unhealthyThreshold) {
            this.unhealthyThreshold = unhealthyThreshold;
            return this;
        }

        public Builder httpMethod(String httpMethod) {
            this.httpMethod = httpMethod;
            return this;
        }

        public Builder httpPath(String httpPath) {
            this.httpPath = httpPath;
            return this;
        }

        public Builder httpHost(String httpHost) {
            this.httpHost = httpHost;
            return this;
        }

        public Builder expectedStatuses(List<StatusRange> expectedStatuses) {
            this.expectedStatuses = expectedStatuses;
            return this;
        }

        public HealthCheckConfig build() {
            return new HealthCheckConfig(probe, interval, timeout, intervalJitter, initialDelay, healthyThreshold, unhealthyThreshold, httpMethod, httpPath, httpHost, expectedStatuses);
        }
    }
}
