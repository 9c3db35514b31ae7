package io.sluice.core.discovery;

import java.util.Objects;

/**
 * One upstream host as a {@link HostSource} sees it.
 *
 * @param host        IP address or host name
 * @param port        TCP port, 1..65535
 * @param weight      the source's weight (SOFARPC default 100); 0 or less = the host gets no traffic
 *                    (it is left out of the cluster); values above 10 000 count as 10 000
 * @param startMillis the host's own start time (epoch ms, the host's wall clock), the T0 of its slow
 *                    start, so that every gateway ramps it on the same clock; 0 = unknown (T0 = when
 *                    this gateway first saw it)
 * @param origin      where it came from, for the admin API (e.g. {@code zookeeper}, {@code dns}, a name)
 * @param warmupMillis the host's own warm-up window (SOFARPC {@code warmupTime}, ms from {@code startMillis});
 *                    0 = none (the cluster's {@code slow_start} window applies)
 * @param warmupWeight the weight the host starts its warm-up at (SOFARPC {@code warmupWeight}); -1 = none (the
 *                    cluster's {@code slow_start.min_weight_percent}, 10 % by default); above {@code weight} counts
 *                    as {@code weight}. Only used with {@code warmupMillis}
 */
public record DiscoveredHost(String host, int port, int weight, long startMillis, String origin,
                             long warmupMillis, int warmupWeight) {

    /** A host without a warm-up of its own. */
    public DiscoveredHost(String host, int port, int weight, long startMillis, String origin) {
        this(host, port, weight, startMillis, origin, 0, -1);
    }

    /** Highest weight a discovered host can have (no MOSN-style clamp to 128: SOFARPC weights are often 100 and up). */
    public static final int MAX_WEIGHT = 10_000;

    public DiscoveredHost {
        Objects.requireNonNull(host, "host");
        if (host.isBlank()) {
            throw new IllegalArgumentException("host is blank");
        }
        if (port < 1 || port > 65535) {
            throw new IllegalArgumentException("port " + port + " is not in [1, 65535]");
        }
        weight = Math.max(0, Math.min(MAX_WEIGHT, weight));
        startMillis = Math.max(0, startMillis);
        origin = origin == null ? "custom" : origin;
        warmupMillis = Math.max(0, warmupMillis);
        warmupWeight = warmupWeight < 0 ? -1 : Math.min(MAX_WEIGHT, warmupWeight);
    }

    /** True if the host brings its own warm-up window. */
    public boolean ownWarmUp() {
        return warmupMillis > 0;
    }

    /** {@code host:port} ({@code [v6]:port}), the identity of a host. */
    public String address() {
        return host.indexOf(':') >= 0 ? "[" + host + "]:" + port : host + ":" + port;
    }
}
