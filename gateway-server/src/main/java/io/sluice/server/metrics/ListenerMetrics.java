package io.sluice.server.metrics;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.netty.channel.ChannelHandler;
import io.sluice.core.cluster.Host;
import io.sluice.lb.ClusterBalancer;
import io.sluice.server.channel.RequestEnd;
import io.sluice.server.channel.RequestLog;
import io.sluice.server.route.Route;
import io.sluice.server.route.RouteTable;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.function.BooleanSupplier;
import java.util.function.Function;

/**
 * Meters of one listener. Everything the data path records into is resolved before a request
 * arrives: per route a {@link RouteMeters} hangs on the compiled {@link Route} (attached by
 * {@link #attach} before the route table is published), so recording a request costs a few
 * field reads and adder increments — no tag lookups, no allocation.
 *
 * <ul>
 *   <li>{@code sluice.downstream.connections.active} (gauge), {@code .accepted}, {@code .closed{reason}},
 *       {@code .refused{reason}} (over {@code max_connections} or {@code max_connections_per_client})</li>
 *   <li>{@code sluice.downstream.write_timeouts}: connections closed because the client stopped reading</li>
 *   <li>{@code sluice.downstream.received|sent} (bytes)</li>
 *   <li>{@code sluice.downstream.requests.active} (gauge)</li>
 *   <li>{@code sluice.requests{listener, protocol, route, outcome, status}} (status class 1xx..5xx, or
 *       "none"; a series appears on its first request)</li>
 *   <li>{@code sluice.request.duration{listener, protocol, route}}: a Prometheus histogram</li>
 * </ul>
 *
 * With recording off ({@code admin.metrics: false}) only the in-flight and open-connection
 * counts (which draining needs) are kept.
 */
public final class ListenerMetrics implements AutoCloseable, RequestLog {

    private static final String[] STATUS_CLASSES = {"none", "1xx", "2xx", "3xx", "4xx", "5xx"};
    private static final RequestOutcome[] OUTCOMES = RequestOutcome.values();
    /** Histogram buckets of {@code sluice.request.duration}: 100 µs to 30 s, roughly ×2.5 apart. */
    static final Duration[] BUCKETS = {
            Duration.ofNanos(100_000), Duration.ofNanos(250_000), Duration.ofNanos(500_000), Duration.ofMillis(1),
            Duration.ofMillis(2), Duration.ofMillis(5), Duration.ofMillis(10), Duration.ofMillis(25),
            Duration.ofMillis(50), Duration.ofMillis(100), Duration.ofMillis(250), Duration.ofMillis(500),
            Duration.ofSeconds(1), Duration.ofMillis(2500), Duration.ofSeconds(5), Duration.ofSeconds(10),
            Duration.ofSeconds(30)};
    /** Route tag of requests that matched no route. */
    public static final String NO_ROUTE = "-";
    /** Route tag of Bolt requests sent to the listener's default cluster. */
    public static final String DEFAULT_ROUTE = "(default)";

    enum CloseReason {
        /** The client closed (or reset) the connection. */
        REMOTE("remote"),
        /** The gateway closed it: keep-alive over, error answer, idle or header timeout. */
        LOCAL("local"),
        /** An I/O error on the connection. */
        ERROR("error"),
        /** The gateway closed it while draining (shutdown or a reload that moved the listener). */
        DRAIN("drain");

        final String tag;

        CloseReason(String tag) {
            this.tag = tag;
        }
    }

    private final MeterRegistry registry;
    private final String listener;
    private final String protocol;
    private final boolean record;
    private final List<Meter> meters = new ArrayList<>();
    private final AtomicInteger activeConnections = new AtomicInteger();
    private final AtomicInteger activeRequests = new AtomicInteger();
    private final Counter accepted;
    private final Counter[] closed = new Counter[CloseReason.values().length];
    private final Counter refusedListener;
    private final Counter refusedClient;
    private final Counter writeTimeouts;
    /** Upgraded (tunnelled) connections open, and opened in total. */
    private final AtomicInteger tunnels = new AtomicInteger();
    private final Counter upgrades;
    final Counter bytesIn;
    final Counter bytesOut;
    private final RouteMeters noRoute;
    private volatile RouteMeters defaultRoute;
    /** Route meters by route name; changed under the gateway's reload lock only. */
    private final Map<String, RouteMeters> routes = new ConcurrentHashMap<>();

    /** An upgraded connection's tunnel opened. */
    public void tunnelOpened() {
        tunnels.incrementAndGet();
        upgrades.increment();
    }

    /** An upgraded connection's tunnel closed. */
    public void tunnelClosed() {
        tunnels.decrementAndGet();
    }

    public ListenerMetrics(MeterRegistry registry, String listener, String protocol) {
        this(registry, listener, protocol, true);
    }

    /** @param record false: keep only the counts draining needs, record nothing into the registry */
    public ListenerMetrics(MeterRegistry registry, String listener, String protocol, boolean record) {
        this.registry = registry;
        this.listener = listener;
        this.protocol = protocol;
        this.record = record;
        meters.add(Gauge.builder("sluice.downstream.connections.active", activeConnections, AtomicInteger::get)
                .tags("listener", listener, "protocol", protocol).description("Open client connections").register(registry));
        meters.add(Gauge.builder("sluice.downstream.requests.active", activeRequests, AtomicInteger::get)
                .tags("listener", listener, "protocol", protocol).description("Requests in flight").register(registry));
        meters.add(Gauge.builder("sluice.upgrades.active", tunnels, AtomicInteger::get)
                .tags("listener", listener).description("Upgraded connections (WebSocket and others) open").register(registry));
        upgrades = add(Counter.builder("sluice.upgrades").tags("listener", listener)
                .description("Connections upgraded (101 relayed, tunnel opened)").register(registry));
        accepted = add(Counter.builder("sluice.downstream.connections.accepted")
                .tags("listener", listener, "protocol", protocol).description("Client connections accepted").register(registry));
        for (CloseReason r : CloseReason.values()) {
            closed[r.ordinal()] = add(Counter.builder("sluice.downstream.connections.closed")
                    .tags("listener", listener, "protocol", protocol, "reason", r.tag)
                    .description("Client connections closed, by who closed them").register(registry));
        }
        refusedListener = add(Counter.builder("sluice.downstream.connections.refused")
                .tags("listener", listener, "protocol", protocol, "reason", "listener_limit")
                .description("Client connections closed at accept: over a connection limit").register(registry));
        refusedClient = add(Counter.builder("sluice.downstream.connections.refused")
                .tags("listener", listener, "protocol", protocol, "reason", "client_limit")
                .description("Client connections closed at accept: over a connection limit").register(registry));
        writeTimeouts = add(Counter.builder("sluice.downstream.write_timeouts")
                .tags("listener", listener, "protocol", protocol)
                .description("Client connections closed because they stopped reading for write_timeout").register(registry));
        bytesIn = add(Counter.builder("sluice.downstream.received").baseUnit("bytes")
                .tags("listener", listener, "protocol", protocol).description("Bytes read from clients").register(registry));
        bytesOut = add(Counter.builder("sluice.downstream.sent").baseUnit("bytes")
                .tags("listener", listener, "protocol", protocol).description("Bytes written to clients").register(registry));
        noRoute = new RouteMeters(NO_ROUTE, null);
        // HTTP/2 (io.sluice.server.http2)
        h2Connections = add(Counter.builder("sluice.http2.connections").tags("listener", listener, "protocol", protocol)
                .description("Client connections that became HTTP/2 (h2c preface or upgrade)").register(registry));
        h2Streams = add(Counter.builder("sluice.http2.streams").tags("listener", listener, "protocol", protocol)
                .description("HTTP/2 streams (requests) started by clients").register(registry));
        h2GoAwayErrors = add(Counter.builder("sluice.http2.goaway_errors").tags("listener", listener, "protocol", protocol)
                .description("HTTP/2 connections the gateway closed with an error GOAWAY (protocol errors, flood and reset limits)")
                .register(registry));
    }

    private final Counter h2Connections;
    private final Counter h2Streams;
    private final Counter h2GoAwayErrors;

    /** A client connection became HTTP/2. */
    public void http2ConnectionOpened() {
        h2Connections.increment();
    }

    /** A client started an HTTP/2 stream. */
    public void http2StreamStarted() {
        h2Streams.increment();
    }

    /** The gateway sent an error GOAWAY (a limit or a protocol error). */
    public void http2GoAwayError() {
        h2GoAwayErrors.increment();
    }

    public double http2GoAwayErrors() {
        return h2GoAwayErrors.count();
    }

    private <M extends Meter> M add(M m) {
        meters.add(m);
        return m;
    }

    /**
     * Gives every route of {@code table} its meters (kept by route name across reloads, so a
     * route that stays keeps counting) and deletes the meters of routes no longer in it. Call
     * before the table is published; under the gateway's reload lock.
     *
     * @param clusters the cluster meters by cluster name
     */
    public void attach(RouteTable table, Function<String, ClusterMetrics> clusters) {
        Set<String> names = new HashSet<>();
        for (Route r : table.routes()) {
            names.add(r.name());
            ClusterMetrics cm = r.cluster() == null ? null : clusters.apply(r.cluster().name());
            RouteMeters m = routes.get(r.name());
            if (m == null) {
                m = new RouteMeters(r.name(), cm);
                routes.put(r.name(), m);
            } else {
                m.cluster = cm;
            }
            m.sides(r, clusters);
            r.meters(m);
        }
        routes.entrySet().removeIf(e -> {
            if (!names.contains(e.getKey())) {
                e.getValue().close();
                return true;
            }
            return false;
        });
    }

    /** Bolt: the meters of requests sent to the listener's default cluster (null: none). */
    public void defaultCluster(ClusterMetrics cm) {
        RouteMeters old = defaultRoute;
        if (cm == null) {
            defaultRoute = null;
        } else if (old == null) {
            defaultRoute = new RouteMeters(DEFAULT_ROUTE, cm);
        } else {
            old.cluster = cm;
        }
        if (cm == null && old != null) {
            old.close();
        }
    }

    /**
     * A new per-connection handler counting bytes and close reasons, or null when not recording.
     *
     * @param draining true once the connection's listener drains: the gateway's closes then count as {@code drain}
     */
    public ChannelHandler newConnectionHandler(BooleanSupplier draining) {
        return record ? new ConnectionMeter(this, draining) : null;
    }

    void connectionClosed(CloseReason reason) {
        closed[reason.ordinal()].increment();
    }

    public void connectionOpened() {
        activeConnections.incrementAndGet();
        if (record) {
            accepted.increment();
        }
    }

    public void connectionClosed() {
        activeConnections.decrementAndGet();
    }

    /** A connection was closed at accept: {@code perClient} over the per-client limit, else over the listener's. */
    public void connectionRefused(boolean perClient) {
        (perClient ? refusedClient : refusedListener).increment();
    }

    /** Connections refused at accept, over the listener's ({@code perClient} false) or the per-client limit. */
    public double refused(boolean perClient) {
        return (perClient ? refusedClient : refusedListener).count();
    }

    /** A client connection was closed because it stayed unwritable for the write timeout. */
    public void writeTimedOut() {
        writeTimeouts.increment();
    }

    public double writeTimeouts() {
        return writeTimeouts.count();
    }

    public int activeConnections() {
        return activeConnections.get();
    }

    public void requestStarted() {
        activeRequests.incrementAndGet();
    }

    public int activeRequests() {
        return activeRequests.get();
    }

    /** Records a finished request: its route, outcome, HTTP status class and duration. */
    @Override
    public void requestEnded(RequestEnd end) {
        requestFinished(end.route, end.outcome, end.httpStatus(), end.durationNanos, end.host);
    }

    /** Records a finished request without a route (or, on a Bolt listener, to its default cluster). */
    public void requestFinished(RequestOutcome outcome, int status, long durationNanos) {
        requestFinished(null, outcome, status, durationNanos);
    }

    /**
     * Records a finished request.
     *
     * @param route  the route it took, or null (no route matched; on Bolt, the default cluster)
     * @param status the HTTP status sent, 0 when none (and for Bolt)
     */
    public void requestFinished(Route route, RequestOutcome outcome, int status, long durationNanos) {
        requestFinished(route, outcome, status, durationNanos, null);
    }

    /** {@code host}: the host that served it (weighted routes count it on that host's cluster), or null. */
    private void requestFinished(Route route, RequestOutcome outcome, int status, long durationNanos, Host host) {
        activeRequests.decrementAndGet();
        if (!record) {
            return;
        }
        RouteMeters m;
        if (route != null && route.meters() != null) {
            m = route.meters();
        } else {
            RouteMeters d = defaultRoute;
            m = d != null && outcome != RequestOutcome.NO_ROUTE && outcome != RequestOutcome.CODEC_ERROR ? d : noRoute;
        }
        m.record(outcome, status, durationNanos, host);
    }

    /** Count of requests with this outcome (all routes and status classes); for tests and the admin API. */
    public double count(RequestOutcome outcome) {
        double sum = noRoute.count(outcome);
        RouteMeters d = defaultRoute;
        if (d != null) {
            sum += d.count(outcome);
        }
        for (RouteMeters m : routes.values()) {
            sum += m.count(outcome);
        }
        return sum;
    }

    @Override
    public void close() {
        for (Meter m : meters) {
            registry.remove(m);
        }
        noRoute.close();
        RouteMeters d = defaultRoute;
        if (d != null) {
            d.close();
        }
        routes.values().forEach(RouteMeters::close);
        routes.clear();
    }

    /** The meters of one route of this listener. */
    public final class RouteMeters {
        private final String route;
        private final AtomicReferenceArray<Counter> requests =
                new AtomicReferenceArray<>(OUTCOMES.length * STATUS_CLASSES.length);
        private final Timer duration;
        volatile ClusterMetrics cluster;
        /** Weighted routes: each side's balancer and meters (null otherwise). */
        private volatile ClusterBalancer[] sideBalancers;
        private volatile ClusterMetrics[] sideMeters;
        private volatile boolean closed;

        /** Weighted clusters: upstream counts go to the cluster that served each request, not the first one. */
        void sides(Route r, Function<String, ClusterMetrics> clusters) {
            ClusterBalancer[] sides = r.traffic() == null ? null : r.traffic().sides();
            if (sides == null) {
                sideBalancers = null;
                sideMeters = null;
                return;
            }
            ClusterMetrics[] ms = new ClusterMetrics[sides.length];
            for (int i = 0; i < sides.length; i++) {
                ms[i] = clusters.apply(sides[i].name());
            }
            sideMeters = ms;
            sideBalancers = sides;
        }

        /** The meters of the side whose host served the request, or null (no host). */
        private ClusterMetrics side(Host host) {
            ClusterBalancer[] bs = sideBalancers;
            ClusterMetrics[] ms = sideMeters;
            if (host == null || bs == null || ms == null) {
                return null;
            }
            for (int i = 0; i < bs.length && i < ms.length; i++) {
                if (bs[i].hosts().contains(host)) {
                    return ms[i];
                }
            }
            return null;
        }

        RouteMeters(String route, ClusterMetrics cluster) {
            this.route = route;
            this.cluster = cluster;
            this.duration = Timer.builder("sluice.request.duration")
                    .tags("listener", listener, "protocol", protocol, "route", route)
                    .description("Time from request head to the last byte of the response")
                    .serviceLevelObjectives(BUCKETS)
                    .register(registry);
        }

        void record(RequestOutcome outcome, int status, long nanos, Host host) {
            int cls = status <= 0 ? 0 : Math.min(5, status / 100);
            int i = outcome.ordinal() * STATUS_CLASSES.length + cls;
            Counter c = requests.get(i);
            if (c == null) {
                c = register(i, outcome, cls);
            }
            c.increment();
            duration.record(nanos, TimeUnit.NANOSECONDS);
            ClusterMetrics cm = cluster;
            if (sideBalancers != null) {
                cm = side(host);
            }
            if (cm != null) {
                cm.record(outcome, status);
            }
        }

        /** First request with this outcome and status class: register its counter (once per series). */
        private Counter register(int i, RequestOutcome outcome, int cls) {
            Counter c = Counter.builder("sluice.requests")
                    .tags("listener", listener, "protocol", protocol, "route", route, "outcome", outcome.tag(),
                            "status", STATUS_CLASSES[cls])
                    .description("Requests by route, outcome and response status class").register(registry);
            if (!requests.compareAndSet(i, null, c)) {
                c = requests.get(i);
            }
            if (closed) {
                registry.remove(c); // a request finishing on a route a reload just removed
            }
            return c;
        }

        double count(RequestOutcome outcome) {
            double sum = 0;
            for (int s = 0; s < STATUS_CLASSES.length; s++) {
                Counter c = requests.get(outcome.ordinal() * STATUS_CLASSES.length + s);
                if (c != null) {
                    sum += c.count();
                }
            }
            return sum;
        }

        void close() {
            closed = true;
            registry.remove(duration);
            for (int i = 0; i < requests.length(); i++) {
                Counter c = requests.get(i);
                if (c != null) {
                    registry.remove(c);
                }
            }
        }
    }
}
