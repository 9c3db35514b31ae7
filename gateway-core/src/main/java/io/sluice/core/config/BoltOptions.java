package io.sluice.core.config;

import java.time.Duration;

/**
 * Downstream Bolt limits of a listener.
 *
 * @param maxFrameLength largest Bolt frame accepted (larger: CODEC_EXCEPTION and the connection closes)
 * @param idleTimeout    a client connection with no traffic is closed after this (bolt clients heartbeat every 15 s)
 * @param defaultCluster cluster for requests no route matches (null = answer NO_PROCESSOR)
 */
public record BoltOptions(int maxFrameLength, Duration idleTimeout, String defaultCluster) {

    public BoltOptions {
        Checks.range("max_frame_length", maxFrameLength, 64, Integer.MAX_VALUE);
        Checks.positive("idle_timeout", idleTimeout);
    }

    public static BoltOptions defaults() {
        return new BoltOptions(16 << 20, Duration.ofSeconds(90), null);
    }
}
