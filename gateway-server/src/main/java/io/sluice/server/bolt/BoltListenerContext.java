package io.sluice.server.bolt;

import io.netty.channel.ChannelHandler;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.util.concurrent.EventExecutor;
import io.sluice.core.config.BoltOptions;
import io.sluice.core.time.Scheduler;
import io.sluice.core.time.Ticker;
import io.sluice.lb.ClusterBalancer;
import io.sluice.server.accesslog.AccessLog;
import io.sluice.server.metrics.ListenerMetrics;
import io.sluice.server.route.RouteTable;
import io.sluice.server.transport.EventLoopScheduler;
import io.sluice.server.transport.Transport;

import java.time.Duration;
import java.util.IdentityHashMap;
import java.util.Map;
import java.util.function.Function;

/**
 * What every connection of one Bolt listener shares: the route table and default cluster (swapped
 * on reload), limits, metrics, and per event loop its multiplexed upstream pool and its
 * {@link Scheduler} (the clock of every timer of that loop's connections: the loop itself in
 * production, a manual scheduler with a fake ticker in tests).
 */
public final class BoltListenerContext {

    private final String name;
    private final ListenerMetrics metrics;
    private final Map<EventExecutor, BoltUpstreamPool> pools;
    private final Function<EventExecutor, BoltUpstreamPool> poolOf;
    private final Function<EventExecutor, Scheduler> schedulerOf;
    private volatile RouteTable routes;
    private volatile BoltOptions options;
    private volatile ClusterBalancer defaultCluster;
    private volatile boolean draining;

    /**
     * @param defaultCluster the balancer of {@code options.defaultCluster()}, or null
     * @param upstreamMeters a cluster's upstream connection-counting handler by cluster name (null: none)
     */
    public BoltListenerContext(String name, RouteTable routes, BoltOptions options, ClusterBalancer defaultCluster,
                               ListenerMetrics metrics, EventLoopGroup workers, Transport transport, Ticker ticker,
                               Function<String, ChannelHandler> upstreamMeters) {
        this.name = name;
        this.routes = routes;
        this.options = options;
        this.defaultCluster = defaultCluster;
        this.metrics = metrics;
        Map<EventExecutor, BoltUpstreamPool> p = new IdentityHashMap<>();
        Map<EventExecutor, Scheduler> s = new IdentityHashMap<>();
        for (EventExecutor e : workers) {
            Scheduler scheduler = new EventLoopScheduler(e, ticker);
            s.put(e, scheduler);
            p.put(e, new BoltUpstreamPool((EventLoop) e, transport.upstreamBootstrap((EventLoop) e), options.maxFrameLength(),
                    scheduler, upstreamMeters));
        }
        this.pools = p;
        this.poolOf = p::get;
        this.schedulerOf = s::get;
    }

    /** A context whose connections find their upstream pool and scheduler through the given functions (tests). */
    BoltListenerContext(String name, RouteTable routes, BoltOptions options, ClusterBalancer defaultCluster,
                        ListenerMetrics metrics, Function<EventExecutor, BoltUpstreamPool> poolOf,
                        Function<EventExecutor, Scheduler> schedulerOf) {
        this.name = name;
        this.routes = routes;
        this.options = options;
        this.defaultCluster = defaultCluster;
        this.metrics = metrics;
        this.pools = Map.of();
        this.poolOf = poolOf;
        this.schedulerOf = schedulerOf;
    }

    public String name() {
        return name;
    }

    /** The scheduler (and through it the clock) of connections on {@code loop}. */
    Scheduler scheduler(EventExecutor loop) {
        return schedulerOf.apply(loop);
    }

    private volatile AccessLog accessLog;

    /** Sets the access log (null = none). */
    public void accessLog(AccessLog log) {
        this.accessLog = log;
    }

    AccessLog accessLog() {
        return accessLog;
    }

    ListenerMetrics metrics() {
        return metrics;
    }

    BoltUpstreamPool pool(EventExecutor loop) {
        return poolOf.apply(loop);
    }

    RouteTable routes() {
        return routes;
    }

    BoltOptions options() {
        return options;
    }

    ClusterBalancer defaultCluster() {
        return defaultCluster;
    }

    /** Reload: new routes, limits and default cluster apply to the next request on every connection. */
    public void update(RouteTable newRoutes, BoltOptions newOptions, ClusterBalancer newDefaultCluster) {
        this.routes = newRoutes;
        this.options = newOptions;
        this.defaultCluster = newDefaultCluster;
    }

    /**
     * How long a draining client connection stays open after its last answer before the gateway
     * closes it (see {@code BoltProxyHandler}); the gateway's drain waits this long too.
     */
    public static final Duration DRAIN_LINGER = Duration.ofMillis(100);

    boolean draining() {
        return draining;
    }

    /** Shutdown: each client connection closes once its in-flight requests are answered. */
    public void startDraining() {
        this.draining = true;
    }

    /** Closes the upstream connections of every loop (each on its own loop), failing what they still carry. */
    public void closePools() {
        for (BoltUpstreamPool pool : pools.values()) {
            if (!pool.loop().isShuttingDown()) {
                pool.loop().execute(pool::closeAll);
            }
        }
    }

    /** Open upstream connections across loops; a test and admin aid (reads from other threads are approximate). */
    public int upstreamConnections() {
        int n = 0;
        for (BoltUpstreamPool p : pools.values()) {
            n += p.openCount();
        }
        return n;
    }
}
