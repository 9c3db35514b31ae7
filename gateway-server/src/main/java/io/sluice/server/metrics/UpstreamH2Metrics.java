package io.sluice.server.metrics;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;

import java.util.concurrent.atomic.LongAdder;
import java.util.function.Consumer;

/**
 * http2: the meters of one cluster's multiplexed HTTP/2 upstream connections ({@code upstream_protocol}
 * {@code h2c} or {@code h2}), tag {@code cluster}; registered with the cluster's first HTTP/2
 * connection ({@link ClusterMetrics#h2()}) and removed with the cluster. Every event loop's pool
 * updates them (adders, no locks).
 */
public final class UpstreamH2Metrics {

    private final LongAdder connections = new LongAdder();
    private final LongAdder streams = new LongAdder();
    private final Counter goAways;
    private final Counter refused;
    private final Counter moved;
    private final Counter pingTimeouts;

    UpstreamH2Metrics(MeterRegistry registry, String cluster, Consumer<Meter> add) {
        add.accept(Gauge.builder("sluice.upstream.h2.connections", connections, LongAdder::sum).tag("cluster", cluster)
                .description("Open HTTP/2 upstream connections (h2c and h2)").register(registry));
        add.accept(Gauge.builder("sluice.upstream.h2.streams.active", streams, LongAdder::sum).tag("cluster", cluster)
                .description("HTTP/2 streams open on upstream connections").register(registry));
        goAways = counter(registry, cluster, add, "sluice.upstream.h2.goaway.received",
                "GOAWAY frames received from upstream hosts");
        refused = counter(registry, cluster, add, "sluice.upstream.h2.streams.refused",
                "Upstream streams refused (RST_STREAM REFUSED_STREAM, or left out by a GOAWAY's last-stream-id)");
        moved = counter(registry, cluster, add, "sluice.upstream.h2.streams.moved",
                "Refused upstream streams sent again on another connection (never processed, RFC 9113 section 8.7)");
        pingTimeouts = counter(registry, cluster, add, "sluice.upstream.h2.ping.timeouts",
                "Upstream HTTP/2 connections closed because a keep-alive PING was not acknowledged in time");
    }

    private static Counter counter(MeterRegistry registry, String cluster, Consumer<Meter> add, String name, String what) {
        Counter c = Counter.builder(name).tag("cluster", cluster).description(what).register(registry);
        add.accept(c);
        return c;
    }

    /** Detached meters (the cluster was removed while connections remain). */
    static UpstreamH2Metrics detached(String cluster) {
        return new UpstreamH2Metrics(new io.micrometer.core.instrument.simple.SimpleMeterRegistry(), cluster, m -> { });
    }

    public void connectionOpened() {
        connections.increment();
    }

    public void connectionClosed() {
        connections.decrement();
    }

    public void streamOpened() {
        streams.increment();
    }

    public void streamClosed() {
        streams.decrement();
    }

    public void goAwayReceived() {
        goAways.increment();
    }

    public void streamRefused() {
        refused.increment();
    }

    public void streamMoved() {
        moved.increment();
    }

    public void pingTimedOut() {
        pingTimeouts.increment();
    }
}
