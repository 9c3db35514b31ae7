package io.sluice.core.config;

import java.time.Duration;

/**
 * Downstream Bolt limits of a listener.
 *
 * @param maxFrameLength largest Bolt frame accepted (larger: CODEC_EXCEPTION and the connection closes)
 * @param idleTimeout    a client connection with no traffic is closed after this (bolt clients heartbeat every 15 s)
 * @param defaultCluster cluster for requests no route matches (null = answer NO_PROCESSOR)
 * @param maxInFlight    two-way requests in flight per client connection: at this many the gateway
 *                       stops reading the connection, and any further request already read with
 *                       them is answered SERVER_THREADPOOL_BUSY
 */
public record BoltOptions(int maxFrameLength, Duration idleTimeout, String defaultCluster, int maxInFlight) {

    /** Default {@code max_in_flight_per_connection}. */
    public static final int DEFAULT_MAX_IN_FLIGHT = 4096;

    public BoltOptions {
        Checks.range("max_frame_length", maxFrameLength, 64, Integer.MAX_VALUE);
        Checks.positive("idle_timeout", idleTimeout);
        Checks.range("max_in_flight_per_connection", maxInFlight, 1, 1_000_000);
    }

    /** Options with the default in-flight limit. */
    public BoltOptions(int maxFrameLength, Duration idleTimeout, String defaultCluster) {
        this(maxFrameLength, idleTimeout, defaultCluster, DEFAULT_MAX_IN_FLIGHT);
    }

    public static BoltOptions defaults() {
        return builder().build();
    }

    /** A builder with the defaults a config file gets for keys it leaves out. */
    public static Builder builder() {
        return new Builder();
    }

    /** A builder holding this config's values. */
    public Builder toBuilder() {
        Builder b = new Builder();
        b.maxFrameLength = maxFrameLength;
        b.idleTimeout = idleTimeout;
        b.defaultCluster = defaultCluster;
        b.maxInFlight = maxInFlight;
        return b;
    }

    /**
     * Builds a {@link BoltOptions} (defaults: those of {@link #defaults()}). Validation happens in the
     * record's constructor, when {@link #build()} is called.
     */
    public static final class Builder {
        private int maxFrameLength = 16 << 20;
        private Duration idleTimeout = Duration.ofSeconds(90);
        private String defaultCluster;
        private int maxInFlight = DEFAULT_MAX_IN_FLIGHT;

        private Builder() {
        }

        public Builder maxFrameLength(int maxFrameLength) {
            this.maxFrameLength = maxFrameLength;
            return this;
        }

        public Builder idleTimeout(Duration idleTimeout) {
            this.idleTimeout = idleTimeout;
            return this;
        }

        public Builder defaultCluster(String defaultCluster) {
            this.defaultCluster = defaultCluster;
            return this;
        }

        public Builder maxInFlight(int maxInFlight) {
            this.maxInFlight = maxInFlight;
            return this;
        }

        public BoltOptions build() {
            return new BoltOptions(maxFrameLength, idleTimeout, defaultCluster, maxInFlight);
        }
    }
}
