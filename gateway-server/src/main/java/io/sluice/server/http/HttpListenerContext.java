package io.sluice.server.http;

import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.util.concurrent.EventExecutor;
import io.sluice.codec.http.Http1DecoderConfig;
import io.sluice.codec.http.PathNormalizer;
import io.sluice.core.cluster.Host;
import io.sluice.core.config.HttpOptions;
import io.sluice.core.time.Scheduler;
import io.sluice.core.time.Ticker;
import io.sluice.server.accesslog.AccessLog;
import io.sluice.server.metrics.ClusterMetrics;
import io.sluice.server.metrics.ListenerMetrics;
import io.sluice.server.route.RouteTable;
import io.sluice.server.transport.EventLoopScheduler;
import io.sluice.server.transport.Transport;

import java.util.IdentityHashMap;
import java.util.Map;
import java.util.function.Function;

/**
 * What every connection of one HTTP listener shares: the route table (swapped on reload), limits
 * and timeouts, metrics, and per event loop its upstream pool and its {@link Scheduler} (the one
 * clock every connection timer of that loop runs on: the loop itself in production, a manual
 * scheduler with a fake ticker in tests).
 */
public final class HttpListenerContext {

    private final String name;
    private final ListenerMetrics metrics;
    private final Map<EventExecutor, HttpUpstreamPool> pools;
    private final Function<EventExecutor, HttpUpstreamPool> poolOf;
    private final Function<EventExecutor, Scheduler> schedulerOf;
    private volatile RouteTable routes;
    private volatile HttpOptions options;
    private volatile boolean draining;
    private volatile AccessLog accessLog;

    public HttpListenerContext(String name, RouteTable routes, HttpOptions options, ListenerMetrics metrics,
                               EventLoopGroup workers, Transport transport, Ticker ticker,
                               Function<String, ClusterMetrics> upstreamMeters) {
        this.name = name;
        this.routes = routes;
        this.options = options;
        this.metrics = metrics;
        Map<EventExecutor, HttpUpstreamPool> p = new IdentityHashMap<>();
        Map<EventExecutor, Scheduler> s = new IdentityHashMap<>();
        for (EventExecutor e : workers) {
            p.put(e, new HttpUpstreamPool((EventLoop) e, transport, upstreamMeters));
            s.put(e, new EventLoopScheduler(e, ticker));
        }
        this.pools = p;
        this.poolOf = p::get;
        this.schedulerOf = s::get;
        applyResponseCodec(options);
    }

    /**
     * A context whose connections find their upstream pool and scheduler through the given
     * functions (tests: one pool on an embedded event loop, a manual scheduler).
     */
    HttpListenerContext(String name, RouteTable routes, HttpOptions options, ListenerMetrics metrics,
                        Function<EventExecutor, HttpUpstreamPool> poolOf, Function<EventExecutor, Scheduler> schedulerOf) {
        this.name = name;
        this.routes = routes;
        this.options = options;
        this.metrics = metrics;
        this.poolOf = poolOf;
        this.schedulerOf = schedulerOf;
        this.pools = Map.of();
    }

    /** The request decoder's settings for {@code o}: limits and path rules. */
    static Http1DecoderConfig requestCodec(HttpOptions o) {
        PathNormalizer.EscapedSlashes escaped = switch (o.path().escapedSlashes()) {
            case REJECT -> PathNormalizer.EscapedSlashes.REJECT;
            case KEEP -> PathNormalizer.EscapedSlashes.KEEP;
            case DECODE -> PathNormalizer.EscapedSlashes.DECODE;
        };
        return new Http1DecoderConfig(o.maxInitialLineLength(), o.maxHeaderSize(), escaped, o.path().mergeSlashes());
    }

    /** The upstream response decoder's limits for {@code o}. */
    static Http1DecoderConfig responseCodec(HttpOptions o) {
        return Http1DecoderConfig.of(o.maxInitialLineLength(), o.maxResponseHeaderSize());
    }

    private void applyResponseCodec(HttpOptions o) {
        Http1DecoderConfig c = responseCodec(o);
        for (HttpUpstreamPool pool : pools.values()) {
            pool.responseCodec = c;
        }
    }

    /** Sets the access log (null = none). */
    public void accessLog(AccessLog log) {
        this.accessLog = log;
    }

    AccessLog accessLog() {
        return accessLog;
    }

    public String name() {
        return name;
    }

    /** The scheduler (and through it the clock) of connections on {@code loop}. */
    public Scheduler scheduler(EventExecutor loop) {
        return schedulerOf.apply(loop);
    }

    ListenerMetrics metrics() {
        return metrics;
    }

    HttpUpstreamPool pool(EventExecutor loop) {
        return poolOf.apply(loop);
    }

    RouteTable routes() {
        return routes;
    }

    HttpOptions options() {
        return options;
    }

    /** Reload: new routes (and limits) apply to the next request on every connection. */
    public void update(RouteTable newRoutes, HttpOptions newOptions) {
        this.routes = newRoutes;
        this.options = newOptions;
        applyResponseCodec(newOptions);
    }

    /** True once {@link #startDraining} ran. */
    public boolean draining() {
        return draining;
    }

    /** Shutdown: the next response on each connection says {@code Connection: close}. */
    public void startDraining() {
        this.draining = true;
    }

    /** Closes idle upstream connections of every loop (each on its own loop). */
    /**
     * Closes the parked keep-alive connections to {@code host} on every event loop (the host failed
     * its health check: a parked connection to it may be dead without the kernel knowing).
     */
    public void closeIdle(Host host) {
        for (HttpUpstreamPool pool : pools.values()) {
            pool.loop().execute(() -> pool.closeIdle(host));
        }
    }

    public void closePools() {
        for (HttpUpstreamPool pool : pools.values()) {
            if (!pool.loop().isShuttingDown()) {
                pool.loop().execute(pool::closeAll);
            }
        }
    }

    /** Parked upstream connections across loops; a test and admin aid (reads from other threads are approximate). */
    public int idleUpstreamConnections() {
        int n = 0;
        for (HttpUpstreamPool p : pools.values()) {
            n += p.idleCount();
        }
        return n;
    }
}
