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
        return new BoltOptions(16 << 20, Duration.ofSeconds(90), null, DEFAULT_MAX_IN_FLIGHT);
    }
}
