package io.sluice.core.config;

import java.time.Duration;

/**
 * Upstream connection reuse.
 *
 * @param maxIdlePerHost          HTTP: idle keep-alive connections kept per host and event loop
 * @param idleTimeout             HTTP: an idle pooled connection is closed after this (keep it below
 *                                the upstream's own keep-alive timeout, e.g. Node.js's 5 s)
 * @param boltConnectionsPerHost  Bolt: multiplexed connections per host and event loop
 */
public record PoolConfig(int maxIdlePerHost, Duration idleTimeout, int boltConnectionsPerHost) {

    public PoolConfig {
        Checks.range("max_idle_per_host", maxIdlePerHost, 0, 100_000);
        Checks.positive("idle_timeout", idleTimeout);
        Checks.range("bolt_connections_per_host", boltConnectionsPerHost, 1, 64);
    }

    public static PoolConfig defaults() {
        return new PoolConfig(64, Duration.ofSeconds(4), 1);
    }
}
