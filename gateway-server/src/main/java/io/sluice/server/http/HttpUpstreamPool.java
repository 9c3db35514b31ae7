package io.sluice.server.http;

import io.netty.bootstrap.Bootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.sluice.codec.http.Http1Decoder;
import io.sluice.codec.http.Http1DecoderConfig;
import io.sluice.core.cluster.Host;
import io.sluice.core.config.ClusterConfig;
import io.sluice.core.config.HttpOptions;
import io.sluice.core.time.Scheduler;
import io.sluice.server.channel.ConnectionTimer;
import io.sluice.server.channel.SluicePipeline;
import io.sluice.server.metrics.ClusterMetrics;
import io.sluice.server.tls.upstream.UpstreamTls;
import io.sluice.server.tls.upstream.UpstreamTlsContexts;
import io.sluice.server.transport.Transport;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * Keep-alive upstream HTTP/1.1 connections of ONE event loop, per host. Only that event loop
 * touches it, so there are no locks: a downstream connection borrows an upstream connection of
 * its own loop for one request and gives it back when the response is complete. Idle connections
 * are parked last-in-first-out (the warmest is reused first) and closed by a periodic sweep (every
 * 250 ms) when idle longer than the cluster's pool idle timeout: time, not a count, retires them,
 * so at any client concurrency a steady load reuses what it opened. An optional per-host cap
 * ({@code pool.max_idle_per_host}) closes connections beyond it instead of parking them.
 */
public final class HttpUpstreamPool {

    /** Limits of the response decoder of new connections (the listener's http options; set on reload). */
    volatile Http1DecoderConfig responseCodec = HttpListenerContext.responseCodec(HttpOptions.defaults());

    /** The clusters' upstream TLS contexts (set once by the listener context; null: no cluster has TLS). */
    volatile UpstreamTlsContexts upstreamTls;

    static final long SWEEP_PERIOD_NANOS = TimeUnit.MILLISECONDS.toNanos(250);

    private final EventLoop loop;
    private final Bootstrap bootstrap;
    private final Map<Host, ArrayDeque<Channel>> idle = new HashMap<>();
    private long generation;
    /** Parked connections, written by the loop only, readable from anywhere. */
    private volatile int parked;
    /** The idle sweep, every {@link #SWEEP_PERIOD_NANOS} once a connection was first parked, on the listener's scheduler. */
    private final ConnectionTimer sweeper;

    private final Function<String, ClusterMetrics> meters;

    /** @param scheduler the listener's scheduler (and clock) for {@code loop} */
    HttpUpstreamPool(EventLoop loop, Scheduler scheduler, Transport transport, Function<String, ClusterMetrics> meters) {
        this(loop, scheduler, transport.upstreamBootstrap(loop), meters);
    }

    /** A pool opening connections from {@code template} (tests: embedded channels on {@code loop}). */
    HttpUpstreamPool(EventLoop loop, Scheduler scheduler, Bootstrap template, Function<String, ClusterMetrics> meters) {
        this.sweeper = new ConnectionTimer(scheduler, this::onSweepTimer);
        this.scheduler = scheduler;
        this.meters = meters;
        this.loop = loop;
        this.bootstrap = template;
    }

    private final Scheduler scheduler;

    /** http2: what the multiplexed upstream connections of this loop need: its scheduler, upstream TLS and cluster meters. */
    public Scheduler scheduler() {
        return scheduler;
    }

    /** http2: the upstream TLS contexts (null in tests that build pools by hand). */
    public UpstreamTlsContexts upstreamTls() {
        return upstreamTls;
    }

    /** http2: the meters of cluster {@code name}, or null. */
    public ClusterMetrics clusterMeters(String name) {
        return meters.apply(name);
    }

    public EventLoop loop() {
        return loop;
    }

    /** The connection template of this loop (mirrors open their own connections from it). */
    public Bootstrap template() { // http2: h2c upstream connections start from it
        return bootstrap;
    }

    /** The meters of cluster {@code name}, or null. */
    ClusterMetrics meters(String name) {
        return meters.apply(name);
    }

    /** Returns a parked live connection to {@code host}, or null. Event loop only. */
    public Channel acquire(Host host) {
        ArrayDeque<Channel> q = idle.get(host);
        if (q == null) {
            return null;
        }
        Channel ch;
        while ((ch = q.pollLast()) != null) {
            parked--;
            if (ch.isActive()) {
                return ch;
            }
            ch.close();
        }
        return null;
    }

    /** Opens a new connection to {@code host}; the future completes on this loop. */
    public ChannelFuture connect(Host host, ClusterConfig cluster) {
        ClusterMetrics cm = meters.apply(cluster.name());
        UpstreamTls tls = cluster.tls() == null ? null : UpstreamTlsContexts.lookup(upstreamTls, cluster);
        Bootstrap b = bootstrap.clone()
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, (int) Math.min(Integer.MAX_VALUE, cluster.connectTimeout().toMillis()))
                .handler(new ChannelInitializer<Channel>() {
                    @Override
                    protected void initChannel(Channel ch) {
                        if (cm != null) {
                            ch.pipeline().addLast(SluicePipeline.UPSTREAM_METER, cm.connectionHandler());
                        }
                        if (tls != null) {
                            tls.addHandler(ch, host, cluster.connectTimeout());
                        }
                        Http1Decoder decoder = Http1Decoder.forResponses(responseCodec);
                        ch.pipeline().addLast(SluicePipeline.HTTP_UPSTREAM_DECODER, decoder)
                                .addLast(SluicePipeline.HTTP_UPSTREAM, new UpstreamHandler(HttpUpstreamPool.this, host, decoder, cm));
                    }
                });
        ChannelFuture f = b.connect(host.host(), host.port());
        // TLS: the connection counts as open once its handshake succeeded
        return cluster.tls() == null ? f : UpstreamTls.handshake(tls, f, host, cluster.name());
    }

    /**
     * Parks a keep-alive connection whose exchange ended, if it is provably clean (nothing it received
     * can be part of a later response, see {@link UpstreamHandler#dirt()}) and the host's cap, if
     * any, leaves room; otherwise closes it.
     */
    public void release(Host host, Channel ch, ClusterConfig cluster) {
        if (!ch.isActive()) {
            return;
        }
        UpstreamHandler h = UpstreamHandler.of(ch);
        int dirt = h.dirt();
        if (dirt >= 0) {
            h.retire(ch, dirt);
            return;
        }
        int max = cluster.pool().maxIdlePerHost();
        ArrayDeque<Channel> q = idle.computeIfAbsent(host, k -> new ArrayDeque<>());
        if (max >= 0 && q.size() >= max) {
            ch.close();
            return;
        }
        h.idleSince = generation;
        h.idleLimit = Math.max(1L, cluster.pool().idleTimeout().toNanos() / SWEEP_PERIOD_NANOS);
        q.addLast(ch);
        parked++;
        if (!sweeper.isArmed()) {
            sweeper.armIn(SWEEP_PERIOD_NANOS); // from then on every period, until closeAll
        }
    }

    /** Called when a parked connection closes by itself. */
    void removeIdle(Host host, Channel ch) {
        ArrayDeque<Channel> q = idle.get(host);
        if (q != null && q.remove(ch)) {
            parked--;
        }
    }

    /** Closes the parked connections to {@code host}. Event loop only. */
    void closeIdle(Host host) {
        ArrayDeque<Channel> q = idle.remove(host);
        if (q != null) {
            parked -= q.size();
            for (Channel ch : q) {
                ch.close();
            }
        }
    }

    int idleCount() {
        return parked;
    }

    private void onSweepTimer() {
        sweep();
        sweeper.armIn(SWEEP_PERIOD_NANOS);
    }

    private void sweep() {
        generation++;
        List<Channel> expired = new ArrayList<>();
        for (ArrayDeque<Channel> q : idle.values()) {
            for (Iterator<Channel> it = q.iterator(); it.hasNext(); ) {
                Channel ch = it.next();
                UpstreamHandler h = UpstreamHandler.of(ch);
                if (h == null || generation - h.idleSince >= h.idleLimit) {
                    it.remove();
                    parked--;
                    expired.add(ch);
                }
            }
        }
        idle.values().removeIf(ArrayDeque::isEmpty);
        for (Channel ch : expired) {
            ch.close();
        }
    }

    /** Closes every parked connection (shutdown and drain). */
    void closeAll() {
        for (ArrayDeque<Channel> q : idle.values()) {
            for (Channel ch : new ArrayList<>(q)) {
                ch.close();
            }
        }
        idle.clear();
        parked = 0;
        sweeper.cancel();
    }
}
