package io.sluice.core.config;

import java.time.Duration;

/**
 * Upstream connection reuse.
 *
 * @param maxIdlePerHost          HTTP: idle keep-alive connections kept per host and event loop;
 *                                {@link #NO_CAP} (the default) keeps every connection a response
 *                                frees until {@code idleTimeout} retires it, 0 keeps none (no reuse)
 * @param idleTimeout             HTTP: an idle pooled connection is closed after this (keep it below
 *                                the upstream's own keep-alive timeout, e.g. Node.js's 5 s)
 * @param boltConnectionsPerHost  Bolt: multiplexed connections per host and event loop
 */
public record PoolConfig(int maxIdlePerHost, Duration idleTimeout, int boltConnectionsPerHost) {

    /**
     * {@code max_idle_per_host}: no cap. Parked connections are then bounded by the peak number of
     * requests in flight to the host (each was opened because all others were busy) and expire by
     * time, so a steady load, at any concurrency, neither closes nor opens connections.
     */
    public static final int NO_CAP = -1;

    public PoolConfig {
        Checks.range("max_idle_per_host", maxIdlePerHost, NO_CAP, 100_000);
        Checks.positive("idle_timeout", idleTimeout);
        Checks.range("bolt_connections_per_host", boltConnectionsPerHost, 1, 64);
    }

    public static PoolConfig defaults() {
        return builder().build();
    }

    /** A builder with the defaults a config file gets for keys it leaves out. */
    public static Builder builder() {
        return new Builder();
    }

    /** A builder holding this config's values. */
    public Builder toBuilder() {
        Builder b = new Builder();
        b.maxIdlePerHost = maxIdlePerHost;
        b.idleTimeout = idleTimeout;
        b.boltConnectionsPerHost = boltConnectionsPerHost;
        return b;
    }

    /**
     * Builds a {@link PoolConfig} (defaults: those of {@link #defaults()}). Validation happens in the
     * record's constructor, when {@link #build()} is called.
     */
    public static final class Builder {
        private int maxIdlePerHost = NO_CAP;
        private Duration idleTimeout = Duration.ofSeconds(4);
        private int boltConnectionsPerHost = 1;

        private Builder() {
        }

        public Builder maxIdlePerHost(int maxIdlePerHost) {
            this.maxIdlePerHost = maxIdlePerHost;
            return this;
        }

        public Builder idleTimeout(Duration idleTimeout) {
            this.idleTimeout = idleTimeout;
            return this;
        }

        public Builder boltConnectionsPerHost(int boltConnectionsPerHost) {
            this.boltConnectionsPerHost = boltConnectionsPerHost;
            return this;
        }

        public PoolConfig build() {
            return new PoolConfig(maxIdlePerHost, idleTimeout, boltConnectionsPerHost);
        }
    }
}
