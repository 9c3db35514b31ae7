package io.sluice.core.config;

import java.time.Duration;

/**
 * Request mirroring ({@code mirrors}, MOSN/Envoy {@code request_mirror_policies}): a copy of each
 * request — or an exact fraction — goes to a shadow cluster, fire and forget. The client never waits
 * for it; the shadow's response is read and discarded; its {@code Host} gets {@code -shadow} appended.
 * HTTP routes only.
 *
 * @param cluster       the shadow cluster (HTTP)
 * @param percent       share of requests mirrored, (0, 100], exact over every window of
 *                      {@code 100 / percent} requests (default 100)
 * @param maxBodyBytes  largest request body mirrored; a request with a larger body is not mirrored
 *                      at all (counted as {@code too_large}) (default 64 KiB)
 * @param maxConcurrent most mirrors of this route in flight at once; more are dropped and counted
 *                      (default 32)
 * @param timeout       how long a mirror may take end to end before its connection is closed
 *                      (null = the shadow cluster's response timeout)
 */
public record MirrorPolicy(String cluster, double percent, long maxBodyBytes, int maxConcurrent, Duration timeout) {

    public static final long DEFAULT_MAX_BODY_BYTES = 64 * 1024;
    public static final int DEFAULT_MAX_CONCURRENT = 32;

    public MirrorPolicy {
        Checks.notBlank("cluster", cluster);
        if (!(percent > 0) || percent > 100) {
            throw new ConfigException("percent", percent, "a percentage in (0, 100]");
        }
        Checks.atLeast("max_body_bytes", maxBodyBytes, 0);
        Checks.range("max_concurrent", maxConcurrent, 1, 100_000);
        if (timeout != null) {
            Checks.positive("timeout", timeout);
        }
    }

    /** Every request, default limits. */
    public static MirrorPolicy to(String cluster) {
        return new MirrorPolicy(cluster, 100, DEFAULT_MAX_BODY_BYTES, DEFAULT_MAX_CONCURRENT, null);
    }

    /** The share in parts per million (exactness unit). */
    public int partsPerMillion() {
        return (int) Math.round(percent * 10_000);
    }
}
