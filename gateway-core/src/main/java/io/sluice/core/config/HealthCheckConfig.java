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
        return new HealthCheckConfig(probe, Duration.ofSeconds(5), Duration.ofSeconds(1), Duration.ZERO,
                Duration.ZERO, 2, 3, null, null, null, null);
    }

    public boolean expects(int status) {
        for (StatusRange r : expectedStatuses) {
            if (r.contains(status)) {
                return true;
            }
        }
        return false;
    }
}
