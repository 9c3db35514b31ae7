package io.sluice.server.bolt;

import io.netty.channel.ChannelHandler;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.util.concurrent.EventExecutor;
import io.sluice.core.config.BoltOptions;
import io.sluice.core.time.Scheduler;
import io.sluice.core.time.Ticker;
import io.sluice.lb.ClusterBalancer;
import io.sluice.server.channel.ListenerContext;
import io.sluice.server.metrics.ListenerMetrics;
import io.sluice.server.route.RouteTable;
import io.sluice.server.tls.upstream.UpstreamTlsContexts;
import io.sluice.server.transport.Transport;

import java.time.Duration;
import java.util.IdentityHashMap;
import java.util.Map;
import java.util.function.Function;

/**
 * What every connection of one Bolt listener shares ({@link ListenerContext}: routes, options,
 * metrics, access log, drain, per-loop scheduler) plus the default cluster (swapped on reload)
 * and, per event loop, its multiplexed upstream pool.
 */
public final class BoltListenerContext extends ListenerContext<BoltOptions> {

    private final Map<EventExecutor, BoltUpstreamPool> pools;
    private final Function<EventExecutor, BoltUpstreamPool> poolOf;
    private volatile ClusterBalancer defaultCluster;

    /**
     * @param defaultCluster the balancer of {@code options.defaultCluster()}, or null
     * @param upstreamMeters a cluster's upstream connection-counting handler by cluster name (null: none)
     */
    public BoltListenerContext(String name, RouteTable routes, BoltOptions options, ClusterBalancer defaultCluster,
                               ListenerMetrics metrics, EventLoopGroup workers, Transport transport, Ticker ticker,
                               Function<String, ChannelHandler> upstreamMeters) {
        this(name, routes, options, defaultCluster, metrics, schedulers(workers, ticker), transport, upstreamMeters);
    }

    private BoltListenerContext(String name, RouteTable routes, BoltOptions options, ClusterBalancer defaultCluster,
                                ListenerMetrics metrics, Map<EventExecutor, Scheduler> schedulers, Transport transport,
                                Function<String, ChannelHandler> upstreamMeters) {
        super(name, routes, options, metrics, schedulers::get);
        this.defaultCluster = defaultCluster;
        Map<EventExecutor, BoltUpstreamPool> p = new IdentityHashMap<>();
        schedulers.forEach((e, scheduler) -> p.put(e, new BoltUpstreamPool((EventLoop) e,
                transport.upstreamBootstrap((EventLoop) e), options.maxFrameLength(), scheduler, upstreamMeters)));
        this.pools = p;
        this.poolOf = p::get;
    }

    /** A context whose connections find their upstream pool and scheduler through the given functions (tests). */
    BoltListenerContext(String name, RouteTable routes, BoltOptions options, ClusterBalancer defaultCluster,
                        ListenerMetrics metrics, Function<EventExecutor, BoltUpstreamPool> poolOf,
                        Function<EventExecutor, Scheduler> schedulerOf) {
        super(name, routes, options, metrics, schedulerOf);
        this.defaultCluster = defaultCluster;
        this.pools = Map.of();
        this.poolOf = poolOf;
    }

    /** The clusters' upstream TLS contexts, for the pools' new connections (set once, after construction). */
    public void upstreamTls(UpstreamTlsContexts contexts) {
        for (BoltUpstreamPool pool : pools.values()) {
            pool.upstreamTls = contexts;
        }
    }

    BoltUpstreamPool pool(EventExecutor loop) {
        return poolOf.apply(loop);
    }

    ClusterBalancer defaultCluster() {
        return defaultCluster;
    }

    /** Reload: new routes, limits and default cluster apply to the next request on every connection. */
    public void update(RouteTable newRoutes, BoltOptions newOptions, ClusterBalancer newDefaultCluster) {
        this.defaultCluster = newDefaultCluster;
        swap(newRoutes, newOptions);
    }

    /**
     * How long a draining client connection stays open after its last answer before the gateway
     * closes it (see {@code BoltProxyHandler}); the gateway's drain waits this long too.
     */
    public static final Duration DRAIN_LINGER = Duration.ofMillis(100);

    /** Closes the upstream connections of every loop (each on its own loop), failing what they still carry. */
    @Override
    public void closePools() {
        for (BoltUpstreamPool pool : pools.values()) {
            if (!pool.loop().isShuttingDown()) {
                pool.loop().execute(pool::closeAll);
            }
        }
    }

    /** Open upstream connections across loops; a test and admin aid (reads from other threads are approximate). */
    @Override
    public int upstreamConnections() {
        int n = 0;
        for (BoltUpstreamPool p : pools.values()) {
            n += p.openCount();
        }
        return n;
    }
}
