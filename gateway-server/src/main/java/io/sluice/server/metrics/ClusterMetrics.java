package io.sluice.server.metrics;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.sluice.core.cluster.Host;
import io.sluice.core.config.Protocol;
import io.sluice.lb.ClusterBalancer;
import io.sluice.lb.HealthProbe;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.concurrent.atomic.LongAdder;

/**
 * Upstream meters of one cluster, created when the cluster is and removed with it. Everything the
 * data path touches is resolved here once: recording is an adder increment.
 *
 * <ul>
 *   <li>{@code sluice.upstream.requests{cluster}}, {@code sluice.upstream.errors{cluster, kind}}
 *       (kind: connect, reset, timeout, 5xx), {@code sluice.upstream.requests.active{cluster}}</li>
 *   <li>{@code sluice.upstream.connections.active|idle{cluster}} gauges,
 *       {@code sluice.upstream.connections.opened|closed{cluster}},
 *       {@code sluice.upstream.connections.retired{cluster, reason}} (HTTP keep-alive connections
 *       closed instead of reused because they were not provably clean)</li>
 *   <li>{@code sluice.health_check.attempts{cluster, result}}</li>
 *   <li>{@code sluice.mirror.requests{cluster, result}}: request copies mirrored to this (shadow) cluster</li>
 * </ul>
 */
public final class ClusterMetrics implements AutoCloseable {

    private static final String[] ERROR_KINDS = {"connect", "reset", "timeout", "5xx"};
    private static final int CONNECT = 0;
    private static final int RESET = 1;
    private static final int TIMEOUT = 2;
    private static final int SERVER_ERROR = 3;

    /** Retire reasons, indexes into {@link #RETIRE_REASONS}: see {@link #connectionRetired(int)}. */
    public static final int RETIRED_BODY_NOT_ALLOWED = 0;
    public static final int RETIRED_AFTER_RESPONSE = 1;
    public static final int RETIRED_WHILE_IDLE = 2;
    private static final String[] RETIRE_REASONS = {"body_not_allowed", "after_response", "while_idle"};

    private final MeterRegistry registry;
    private final String name;
    private final boolean multiplexed;
    private final List<Meter> meters = new ArrayList<>();
    private final Counter requests;
    private final Counter[] errors = new Counter[ERROR_KINDS.length];
    private final Counter created;
    private final Counter closed;
    private final Counter[] retired = new Counter[RETIRE_REASONS.length];
    private final Counter probesPassed;
    private final Counter probesFailed;
    /** Mirror results, indexes into {@link #MIRROR_RESULTS}: see {@link #mirrored(int)}. */
    public static final int MIRROR_SENT = 0;
    public static final int MIRROR_FAILED = 1;
    public static final int MIRROR_TIMEOUT = 2;
    public static final int MIRROR_DROPPED = 3;
    public static final int MIRROR_TOO_LARGE = 4;
    public static final int MIRROR_ABANDONED = 5;
    private static final String[] MIRROR_RESULTS = {"sent", "failed", "timeout", "dropped", "too_large", "abandoned"};
    private static final MeterRegistry DETACHED = new SimpleMeterRegistry();
    private boolean removed;
    private final AtomicReferenceArray<Counter> mirrors = new AtomicReferenceArray<>(MIRROR_RESULTS.length);
    private final LongAdder open = new LongAdder();
    private final LongAdder inUse = new LongAdder();
    private final ChannelHandler connectionHandler = new ConnectionHandler();

    public ClusterMetrics(MeterRegistry registry, ClusterBalancer balancer) {
        this.registry = registry;
        this.name = balancer.name();
        this.multiplexed = balancer.config().protocol() == Protocol.BOLT;
        requests = add(Counter.builder("sluice.upstream.requests").tag("cluster", name)
                .description("Requests sent to a host of the cluster (counted when they end)").register(registry));
        for (int i = 0; i < ERROR_KINDS.length; i++) {
            errors[i] = add(Counter.builder("sluice.upstream.errors").tags("cluster", name, "kind", ERROR_KINDS[i])
                    .description("Upstream requests that failed: connect (refused or timed out), reset, timeout, 5xx")
                    .register(registry));
        }
        add(Gauge.builder("sluice.upstream.requests.active", balancer, ClusterMetrics::activeRequests)
                .tag("cluster", name).description("Requests in flight to hosts of the cluster").register(registry));
        add(Gauge.builder("sluice.upstream.connections.active", open, LongAdder::sum).tag("cluster", name)
                .description("Open upstream connections").register(registry));
        add(Gauge.builder("sluice.upstream.connections.idle", this, ClusterMetrics::idle).tag("cluster", name)
                .description("Open HTTP upstream connections parked in the keep-alive pool (0 for Bolt)").register(registry));
        created = add(Counter.builder("sluice.upstream.connections.opened").tag("cluster", name)
                .description("Upstream connections established").register(registry));
        closed = add(Counter.builder("sluice.upstream.connections.closed").tag("cluster", name)
                .description("Upstream connections closed (by either side)").register(registry));
        for (int i = 0; i < RETIRE_REASONS.length && !multiplexed; i++) { // HTTP only: Bolt connections are not borrowed
            retired[i] = add(Counter.builder("sluice.upstream.connections.retired").tags("cluster", name, "reason", RETIRE_REASONS[i])
                    .description("HTTP keep-alive upstream connections closed instead of reused because they were not provably"
                            + " clean: body_not_allowed (a response that cannot have a body announced one), after_response"
                            + " (bytes beyond the response), while_idle (bytes sent to a parked connection)")
                    .register(registry));
        }
        probesPassed = add(Counter.builder("sluice.health_check.attempts").tags("cluster", name, "result", "success")
                .description("Active health probes by result").register(registry));
        probesFailed = add(Counter.builder("sluice.health_check.attempts").tags("cluster", name, "result", "failure")
                .description("Active health probes by result").register(registry));
    }

    /**
     * Counts one mirror that ended with {@code result} ({@link #MIRROR_SENT}...). The series of a
     * cluster appear with its first mirror, so clusters that are no shadow export none.
     */
    public void mirrored(int result) {
        Counter c = mirrors.get(result);
        if (c == null) {
            c = registerMirrors(result);
        }
        c.increment();
    }

    private synchronized Counter registerMirrors(int result) {
        if (removed) { // a mirror that ended after its cluster was removed: not exported
            return Counter.builder("sluice.mirror.requests").register(DETACHED);
        }
        if (mirrors.get(0) == null) {
            for (int i = 0; i < MIRROR_RESULTS.length; i++) {
                mirrors.set(i, add(Counter.builder("sluice.mirror.requests").tags("cluster", name, "result", MIRROR_RESULTS[i])
                        .description("Request copies mirrored to this shadow cluster, by result: sent (an answer began),"
                                + " failed (no host, connect error, reset), timeout, dropped (max_concurrent mirrors in flight),"
                                + " too_large (body over max_body_bytes, not mirrored), abandoned (the client's request ended"
                                + " before its body was complete)")
                        .register(registry)));
            }
        }
        return mirrors.get(result);
    }

    private <M extends Meter> M add(M m) {
        meters.add(m);
        return m;
    }

    private static double activeRequests(ClusterBalancer b) {
        long n = 0;
        for (Host h : b.hosts()) {
            n += h.activeRequests();
        }
        return n;
    }

    private double idle() {
        return multiplexed ? 0 : Math.max(0, open.sum() - inUse.sum());
    }

    public String name() {
        return name;
    }

    /** Records an upstream request that ended with {@code outcome} (HTTP status or 0). */
    void record(RequestOutcome outcome, int status) {
        int kind;
        switch (outcome) {
            case PROXIED, CLIENT_CLOSED -> kind = outcome == RequestOutcome.PROXIED && status >= 500 ? SERVER_ERROR : -1;
            case CONNECT_FAILURE, CONNECT_TIMEOUT -> kind = CONNECT;
            case UPSTREAM_RESET -> kind = RESET;
            case UPSTREAM_TIMEOUT -> kind = TIMEOUT;
            default -> {
                return; // the request never reached a host
            }
        }
        requests.increment();
        if (kind >= 0) {
            errors[kind].increment();
        }
    }

    /** An HTTP upstream connection starts carrying a request. */
    public void connectionBorrowed() {
        inUse.increment();
    }

    /** An HTTP upstream connection stopped carrying a request (parked or closed). */
    public void connectionReturned() {
        inUse.decrement();
    }

    /**
     * An HTTP keep-alive upstream connection was closed instead of reused: {@link #RETIRED_BODY_NOT_ALLOWED}
     * (a response to HEAD, a 1xx, 204 or 304 announced a body, or a 101 switched protocols),
     * {@link #RETIRED_AFTER_RESPONSE} (bytes arrived beyond the end of the response) or
     * {@link #RETIRED_WHILE_IDLE} (the upstream sent bytes to the connection while it was parked).
     */
    public void connectionRetired(int reason) {
        retired[reason].increment();
    }

    /** A sharable handler for upstream pipelines: counts connections created, closed and open. */
    public ChannelHandler connectionHandler() {
        return connectionHandler;
    }

    /** Wraps a health probe so that every attempt is counted by result. */
    public HealthProbe countProbes(HealthProbe probe) {
        return (host, callback) -> probe.probe(host, (success, reason) -> {
            (success ? probesPassed : probesFailed).increment();
            callback.complete(success, reason);
        });
    }

    private volatile UpstreamH2Metrics h2;

    /** http2: the cluster's HTTP/2 upstream meters, registered on first use (clusters without HTTP/2 hosts export none). */
    public UpstreamH2Metrics h2() {
        UpstreamH2Metrics m = h2;
        return m != null ? m : registerH2();
    }

    private synchronized UpstreamH2Metrics registerH2() {
        if (h2 == null) {
            h2 = removed ? UpstreamH2Metrics.detached(name) : new UpstreamH2Metrics(registry, name, this::add);
        }
        return h2;
    }

    @Override
    public synchronized void close() {
        removed = true;
        meters.forEach(registry::remove);
    }

    @ChannelHandler.Sharable
    private final class ConnectionHandler extends ChannelInboundHandlerAdapter {
        @Override
        public void channelActive(ChannelHandlerContext ctx) {
            created.increment();
            open.increment();
            ctx.fireChannelActive();
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            closed.increment();
            open.decrement();
            ctx.fireChannelInactive();
        }
    }
}
