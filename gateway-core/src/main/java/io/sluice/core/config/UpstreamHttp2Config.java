package io.sluice.core.config;

import java.time.Duration;

/**
 * http2: options of a cluster's multiplexed HTTP/2 upstream connections (cluster {@code http2} block,
 * {@code upstream_protocol} {@code h2c} or {@code h2}; docs/http2.md).
 *
 * @param pingInterval a connection on which no stream started or ended for this long gets a PING
 *                     (keep-alive, dead-peer detection); {@link Duration#ZERO} = no PINGs (default)
 * @param pingTimeout  a PING not acknowledged within this closes the connection (default 20 s)
 */
public record UpstreamHttp2Config(Duration pingInterval, Duration pingTimeout) {

    public static final Duration DEFAULT_PING_TIMEOUT = Duration.ofSeconds(20);
    private static final UpstreamHttp2Config DEFAULTS = new UpstreamHttp2Config(Duration.ZERO, DEFAULT_PING_TIMEOUT);

    public UpstreamHttp2Config {
        pingInterval = pingInterval == null ? Duration.ZERO : Checks.nonNegative("ping_interval", pingInterval);
        pingTimeout = pingTimeout == null ? DEFAULT_PING_TIMEOUT : Checks.positive("ping_timeout", pingTimeout);
    }

    /** No PINGs. */
    public static UpstreamHttp2Config defaults() {
        return DEFAULTS;
    }

    /** Whether idle connections get PINGs. */
    public boolean pings() {
        return !pingInterval.isZero();
    }
}
