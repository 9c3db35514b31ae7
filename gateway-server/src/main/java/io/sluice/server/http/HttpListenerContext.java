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
import io.sluice.server.channel.ListenerContext;
import io.sluice.server.metrics.ClusterMetrics;
import io.sluice.server.metrics.ListenerMetrics;
import io.sluice.server.route.RouteTable;
import io.sluice.server.tls.upstream.UpstreamTlsContexts;
import io.sluice.server.transport.Transport;

import java.util.IdentityHashMap;
import java.util.Map;
import java.util.function.Function;

/**
 * What every connection of one HTTP listener shares ({@link ListenerContext}: routes, options,
 * metrics, access log, drain, per-loop scheduler) plus, per event loop, its keep-alive upstream
 * pool, and the decoder settings derived from the options.
 */
public final class HttpListenerContext extends ListenerContext<HttpOptions> {

    private final Map<EventExecutor, HttpUpstreamPool> pools;
    private final Function<EventExecutor, HttpUpstreamPool> poolOf;

    /** @param upstreamMeters a cluster's meters by cluster name (null results: none) */
    public HttpListenerContext(String name, RouteTable routes, HttpOptions options, ListenerMetrics metrics,
                               EventLoopGroup workers, Transport transport, Ticker ticker,
                               Function<String, ClusterMetrics> upstreamMeters) {
        this(name, routes, options, metrics, schedulers(workers, ticker), transport, upstreamMeters);
    }

    private HttpListenerContext(String name, RouteTable routes, HttpOptions options, ListenerMetrics metrics,
                                Map<EventExecutor, Scheduler> schedulers, Transport transport,
                                Function<String, ClusterMetrics> upstreamMeters) {
        super(name, routes, options, metrics, schedulers::get);
        Map<EventExecutor, HttpUpstreamPool> p = new IdentityHashMap<>();
        schedulers.forEach((e, scheduler) -> p.put(e, new HttpUpstreamPool((EventLoop) e, scheduler, transport, upstreamMeters)));
        this.pools = p;
        this.poolOf = p::get;
        applyResponseCodec(options);
    }

    /**
     * A context whose connections find their upstream pool and scheduler through the given
     * functions (tests: one pool on an embedded event loop, a manual scheduler).
     */
    HttpListenerContext(String name, RouteTable routes, HttpOptions options, ListenerMetrics metrics,
                        Function<EventExecutor, HttpUpstreamPool> poolOf, Function<EventExecutor, Scheduler> schedulerOf) {
        super(name, routes, options, metrics, schedulerOf);
        this.poolOf = poolOf;
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

    /** The clusters' upstream TLS contexts, for the pools' new connections (set once, after construction). */
    public void upstreamTls(UpstreamTlsContexts contexts) {
        for (HttpUpstreamPool pool : pools.values()) {
            pool.upstreamTls = contexts;
        }
    }

    public HttpUpstreamPool pool(EventExecutor loop) {
        return poolOf.apply(loop);
    }

    /** Reload: new routes (and limits) apply to the next request on every connection. */
    public void update(RouteTable newRoutes, HttpOptions newOptions) {
        swap(newRoutes, newOptions);
        applyResponseCodec(newOptions);
    }

    /**
     * Closes the parked keep-alive connections to {@code host} on every event loop (the host failed
     * its health check: a parked connection to it may be dead without the kernel knowing).
     */
    public void closeIdle(Host host) {
        for (HttpUpstreamPool pool : pools.values()) {
            pool.loop().execute(() -> pool.closeIdle(host));
        }
    }

    @Override
    public void closePools() {
        for (HttpUpstreamPool pool : pools.values()) {
            if (!pool.loop().isShuttingDown()) {
                pool.loop().execute(pool::closeAll);
            }
        }
    }

    /** Parked upstream connections across loops; a test and admin aid (reads from other threads are approximate). */
    @Override
    public int upstreamConnections() {
        int n = 0;
        for (HttpUpstreamPool p : pools.values()) {
            n += p.idleCount();
        }
        return n;
    }
}
