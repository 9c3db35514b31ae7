package io.sluice.server;

import io.micrometer.core.instrument.MeterRegistry;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.util.concurrent.GlobalEventExecutor;
import io.netty.util.internal.PlatformDependent;
import io.sluice.core.cluster.Host;
import io.sluice.core.config.ConfigException;
import io.sluice.core.config.ListenerConfig;
import io.sluice.core.config.Protocol;
import io.sluice.core.config.TransportConfig;
import io.sluice.core.time.Ticker;
import io.sluice.lb.ClusterBalancer;
import io.sluice.server.accesslog.AccessLog;
import io.sluice.server.admin.AdminHandler;
import io.sluice.server.bolt.BoltListenerContext;
import io.sluice.server.bolt.BoltServerInitializer;
import io.sluice.server.channel.DrainEvent;
import io.sluice.server.channel.SluicePipeline;
import io.sluice.server.http.HttpListenerContext;
import io.sluice.server.http.HttpServerInitializer;
import io.sluice.server.metrics.GatewayMetrics;
import io.sluice.server.metrics.ListenerMetrics;
import io.sluice.server.route.RouteTable;
import io.sluice.server.tls.DownstreamTls;
import io.sluice.server.transport.ConnectionLimitHandler;
import io.sluice.server.transport.Sockets;
import io.sluice.server.transport.Transport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BiConsumer;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.function.IntSupplier;

/**
 * The data-path listeners of a gateway: binding them (one socket, or one per worker with
 * SO_REUSEPORT), their three protocol variants (HTTP, Bolt, and "auto" which picks per
 * connection), swapping in route tables on reload, retiring the sockets a reload moved or removed,
 * and draining on shutdown. Time is the injected {@link Ticker}.
 *
 * <p>Writers ({@link #start}, {@link #stage}, {@link #apply}, shutdown) are serialized by the
 * owner; the running set is published as an immutable map for readers on any thread.
 */
final class Listeners {

    private static final Logger log = LoggerFactory.getLogger(Listeners.class);
    /** How often a drain looks whether connections are gone. */
    private static final long POLL_MILLIS = 10;

    private final MeterRegistry registry;
    private final GatewayMetrics metrics;
    private final EventLoopGroup workers;
    private final Transport transport;
    private final TransportConfig transportConfig;
    /** One listening socket per worker (SO_REUSEPORT), see {@link #listen}. */
    private final boolean reusePort;
    private final Ticker ticker;
    private final AccessLog accessLog;
    private final ClusterRegistry clusters;
    /** True while the gateway runs; a retiring listener stops waiting for its connections when it turns false. */
    private final BooleanSupplier running;
    /** Copy on write: readers on any thread see a consistent map. */
    private volatile Map<String, RunningListener> listeners = Map.of();
    /** Listeners a reload moved or removed, draining until their connections are gone. */
    private final List<RunningListener> retiring = new CopyOnWriteArrayList<>();
    /** Shutdown: the ticker time until which idle HTTP connections may linger (their listeners' drain_grace). */
    private volatile long drainGraceUntil;
    /** Run when a host fails its health check or is ejected (written under the lock, read from event loops). */
    private final List<Consumer<Host>> unavailableHooks = new CopyOnWriteArrayList<>();
    /** TLS: the thread certificate files are watched on (null until a TLS listener starts). */
    private io.netty.util.concurrent.DefaultEventExecutor tlsControlLoop;
    private io.sluice.core.time.Scheduler tlsControl;

    /** Rate limiting (docs/rate-limits.md); set once before {@link #start}. */
    volatile io.sluice.server.policy.ratelimit.RateLimiter rateLimiter;

    Listeners(MeterRegistry registry, GatewayMetrics metrics, EventLoopGroup workers, Transport transport,
              TransportConfig transportConfig, boolean reusePort, Ticker ticker, AccessLog accessLog,
              ClusterRegistry clusters, BooleanSupplier running) {
        this.registry = registry;
        this.metrics = metrics;
        this.workers = workers;
        this.transport = transport;
        this.transportConfig = transportConfig;
        this.reusePort = reusePort;
        this.ticker = ticker;
        this.accessLog = accessLog;
        this.clusters = clusters;
        this.running = running;
    }

    /** Tells every HTTP listener that {@code host} is gone: its parked connections are closed. */
    void hostUnavailable(Host host) {
        for (Consumer<Host> hook : unavailableHooks) {
            hook.accept(host);
        }
    }

    /** Binds and starts every listener; the futures complete when each listens (or fails to). */
    synchronized List<CompletableFuture<Void>> start(List<ListenerConfig> configs, Map<String, ClusterBalancer> built) {
        List<CompletableFuture<Void>> binds = new ArrayList<>();
        Map<String, RunningListener> next = new LinkedHashMap<>();
        try {
            for (int i = 0; i < configs.size(); i++) {
                ListenerConfig l = configs.get(i);
                RunningListener rl = bindAt(l, false, "$.listeners[" + i + "]");
                next.put(l.name(), rl);
                RouteTable table = RouteTable.compile(l.routes(), built);
                attachMeters(rl, l, table);
                rl.reconfigure.accept(l, table);
                rl.startAccepting();
                binds.add(rl.sockets.bound());
            }
        } finally {
            listeners = Collections.unmodifiableMap(next); // so that a shutdown after a failure closes what was bound
        }
        return binds;
    }

    /** The running listeners' names, in config order. */
    Set<String> names() {
        return listeners.keySet();
    }

    /** The bound address of a listener (useful with port 0). */
    InetSocketAddress address(String listener) {
        RunningListener l = Objects.requireNonNull(listeners.get(listener), () -> "no listener " + listener);
        return (InetSocketAddress) l.sockets.localAddress();
    }

    /** Upstream connections of a listener: HTTP, the parked keep-alive ones; Bolt, the open multiplexed ones. */
    int upstreamConnections(String listener) {
        return listeners.get(listener).upstreamConnections.getAsInt();
    }

    /** Requests in flight on all listeners, running and retiring. */
    int activeRequests() {
        Set<ListenerMetrics> seen = Collections.newSetFromMap(new IdentityHashMap<>());
        int n = 0;
        for (RunningListener l : all()) {
            if (seen.add(l.metrics)) {
                n += l.metrics.activeRequests();
            }
        }
        return n;
    }

    /** Listeners for the status page: running ones, then those draining after a reload. */
    List<AdminHandler.ListenerInfo> info() {
        List<AdminHandler.ListenerInfo> out = new ArrayList<>();
        for (RunningListener l : all()) {
            out.add(new AdminHandler.ListenerInfo(l.config.name(), l.config.protocol().jsonName(),
                    boundAddress(l), l.channels.size(), l.metrics.activeRequests(), retiring.contains(l)));
        }
        return out;
    }

    // ------------------------------------------------------------------ reload

    /**
     * Rejects what a reload cannot do to the listeners: change the protocol of a listener that
     * keeps its address (the old socket holds the port while it drains).
     */
    void checkReloadable(List<ListenerConfig> next) {
        Map<String, RunningListener> cur = listeners;
        for (int i = 0; i < next.size(); i++) {
            ListenerConfig l = next.get(i);
            RunningListener r = cur.get(l.name());
            if (r != null && r.config.protocol() != l.protocol() && r.config.address().equals(l.address())
                    && r.config.port() == l.port() && l.port() != 0) {
                throw new ConfigException("$.listeners[" + i + "].protocol", l.protocol().jsonName(),
                        "the running " + r.config.protocol().jsonName()
                                + " while the listener keeps its port (give it a new port, or restart)");
            }
            if (r != null && (r.config.tls() == null) != (l.tls() == null)) { // TLS: a socket-level change
                throw new ConfigException("$.listeners[" + i + "].tls", l.tls() == null ? null : "{...}",
                        (r.config.tls() == null ? "no tls" : "a tls block") + " like the running listener"
                                + " (turning TLS on or off needs a new listener name, or a restart)");
            }
        }
    }

    /** Sockets a reload bound for its new and moved listeners, not accepting yet. */
    static final class Staged {
        private final Map<String, RunningListener> bound;

        private Staged(Map<String, RunningListener> bound) {
            this.bound = bound;
        }
    }

    /**
     * Binds the listeners of {@code next} that are new or whose address, port or protocol changed
     * (not accepting yet). If one cannot bind, closes those bound and throws a {@link ConfigException}
     * naming its path. Blocks until the sockets listen: not on an event loop.
     */
    Staged stage(List<ListenerConfig> next) {
        Map<String, RunningListener> cur = listeners;
        Map<String, RunningListener> bound = new LinkedHashMap<>();
        for (int i = 0; i < next.size(); i++) {
            ListenerConfig l = next.get(i);
            RunningListener r = cur.get(l.name());
            if (r != null && r.config.protocol() == l.protocol() && r.config.address().equals(l.address())
                    && r.config.port() == l.port()) {
                continue;
            }
            RunningListener rl;
            try {
                rl = bindAt(l, false, "$.listeners[" + i + "]");
            } catch (ConfigException e) {
                for (RunningListener b : bound.values()) {
                    unbind(b);
                }
                throw e;
            }
            bound.put(l.name(), rl);
            Throwable failed = rl.sockets.awaitBound();
            if (failed != null) {
                for (RunningListener b : bound.values()) {
                    unbind(b);
                }
                String why = Sockets.reason(failed.getCause() != null ? failed.getCause() : failed);
                throw new ConfigException("$.listeners[" + i + "].port", l.port(), "an address and port this gateway can bind"
                        + " (binding " + Sockets.hostPort(l.address(), l.port()) + " failed: " + why + ")");
            }
        }
        return new Staged(bound);
    }

    /**
     * What {@link #apply} changed.
     *
     * @param changed   listeners whose routes, options or sockets changed
     * @param removed   listeners no longer configured (draining)
     * @param listening the new sockets, {@code name=address:port}
     */
    record Applied(List<String> changed, List<String> removed, List<String> listening) {
    }

    /**
     * Swaps in {@code next}: every kept listener gets a new route table and options (the next
     * request on every connection uses them), staged sockets start accepting, and the sockets they
     * replace and removed listeners {@linkplain #retire retire} within {@code drainTimeout}.
     */
    synchronized Applied apply(Staged staged, List<ListenerConfig> next, Map<String, ClusterBalancer> published,
                               Duration drainTimeout) {
        // compile every table before swapping any (compile only fails on a bug: the config validated its clusters)
        Map<String, RouteTable> tables = new HashMap<>();
        for (ListenerConfig l : next) {
            tables.put(l.name(), RouteTable.compile(l.routes(), published));
        }
        Map<String, RunningListener> cur = listeners;
        List<String> changed = new ArrayList<>();
        List<RunningListener> toRetire = new ArrayList<>();
        Map<String, RunningListener> nextListeners = new LinkedHashMap<>();
        for (ListenerConfig l : next) {
            RouteTable table = tables.get(l.name());
            RunningListener was = cur.get(l.name());
            RunningListener rl = staged.bound.get(l.name());
            if (rl != null) {
                attachMeters(rl, l, table);
                rl.reconfigure.accept(l, table);
                rl.startAccepting();
                if (was != null) {
                    toRetire.add(was);
                    if (was.config.protocol() == l.protocol()) {
                        was.reconfigure.accept(l, table); // its kept-alive connections see the new routes too
                    }
                }
                changed.add(l.name());
            } else {
                attachMeters(was, l, table);
                was.reconfigure.accept(l, table);
                if (!was.config.equals(l)) {
                    changed.add(l.name());
                }
                rl = was.withConfig(l);
            }
            nextListeners.put(l.name(), rl);
        }
        List<String> removed = new ArrayList<>();
        for (RunningListener rl : cur.values()) {
            if (!nextListeners.containsKey(rl.config.name())) {
                toRetire.add(rl);
                removed.add(rl.config.name());
            }
        }
        listeners = Collections.unmodifiableMap(nextListeners);
        for (RunningListener rl : toRetire) {
            retire(rl, drainTimeout);
        }
        List<String> listening = new ArrayList<>();
        staged.bound.forEach((n, rl) -> listening.add(n + "=" + boundAddress(rl)));
        return new Applied(changed, removed, listening);
    }

    // ------------------------------------------------------------------ binding

    /**
     * Binds a data-path listener. It accepts on a worker loop, not a separate acceptor thread:
     * handing each accepted connection from such a thread to a worker costs a thread switch per
     * connection (a fifth of the gateway's CPU in a connection-churn run on one core). With one
     * socket, the accepting loop still hands (N-1)/N of the connections to the other workers; with
     * {@code transport.reuse_port} every worker has its own socket on the port and keeps what it accepts.
     */
    private ListenSockets listen(ListenerConfig l, ChannelInitializer<SocketChannel> pipeline, boolean accepting,
                                 ConnectionLimitHandler limits, DownstreamTls tls) {
        if (tls != null && l.protocol() != Protocol.AUTO) { // auto: ProtocolDetector adds TLS at a ClientHello
            pipeline = tlsFirst(pipeline, tls);
        }
        ServerBootstrap template = new ServerBootstrap()
                .channel(transport.serverChannel())
                .handler(limits) // max_connections, max_connections_per_client: refused before a pipeline exists
                .option(ChannelOption.SO_BACKLOG, transportConfig.backlog())
                .option(ChannelOption.SO_REUSEADDR, true)
                .option(ChannelOption.AUTO_READ, accepting) // a reload binds first and accepts once routes are in
                // Netty's socket channels already enable TCP_NODELAY where they can (Linux, macOS, ...):
                // setting it again costs one setsockopt per accepted connection (visible in churn runs)
                .childOption(ChannelOption.TCP_NODELAY, !PlatformDependent.canEnableTcpNoDelayByDefault()
                        ? Boolean.TRUE : null)
                .childOption(ChannelOption.ALLOCATOR, Transport.allocator())
                .childHandler(pipeline);
        return ListenSockets.bind(template, workers, reusePort ? transport.reusePortOption() : null, l.address(), l.port(),
                "listener " + l.name());
    }

    /** TLS in front of a listener's pipeline: the SNI and handshake handlers right after the meter. */
    private static ChannelInitializer<SocketChannel> tlsFirst(ChannelInitializer<SocketChannel> inner, DownstreamTls tls) {
        return new ChannelInitializer<>() {
            @Override
            protected void initChannel(SocketChannel ch) {
                ch.pipeline().addLast(inner); // runs at once (the channel is registered) and removes itself
                tls.addHandlers(ch.pipeline(), SluicePipeline.METER);
            }
        };
    }

    /** {@link #bind}, with a TLS config error placed under the listener's JSON path {@code at}. */
    private RunningListener bindAt(ListenerConfig l, boolean accepting, String at) {
        try {
            return bind(l, accepting);
        } catch (ConfigException e) {
            throw e.path().startsWith("$") ? e : e.under(at);
        }
    }

    /** Loads a listener's certificates (null: cleartext) and starts watching its files. */
    private DownstreamTls startTls(ListenerConfig l, io.sluice.server.channel.ListenerContext<?> ctx) {
        if (l.tls() == null) {
            return null;
        }
        DownstreamTls tls = DownstreamTls.start(l.name(), l.tls(), registry, ctx::scheduler);
        tls.watch(tlsControl());
        return tls;
    }

    /** The thread TLS listeners poll their certificate files and rotate ticket keys on; made at the first. */
    private synchronized io.sluice.core.time.Scheduler tlsControl() {
        if (tlsControl == null) {
            tlsControlLoop = new io.netty.util.concurrent.DefaultEventExecutor(
                    new io.netty.util.concurrent.DefaultThreadFactory("sluice-tls-watch", true));
            tlsControl = new io.sluice.server.transport.EventLoopScheduler(tlsControlLoop, ticker);
        }
        return tlsControl;
    }

    /** The TLS state of every running listener that has it (admin {@code /certs}). */
    List<DownstreamTls> tls() {
        List<DownstreamTls> out = new ArrayList<>();
        for (RunningListener l : listeners.values()) {
            if (l.tls != null) {
                out.add(l.tls);
            }
        }
        return out;
    }

    /**
     * Binds a listener with an empty route table ({@link RunningListener#reconfigure} swaps the real
     * one in). {@code accepting} false: the socket listens but accepts nothing until
     * {@link RunningListener#startAccepting} (a reload binds before it builds the new routes).
     * The listener's meters are those of the running listener of the same name and protocol, if any.
     */
    private RunningListener bind(ListenerConfig l, boolean accepting) {
        String protocol = l.protocol().jsonName();
        ListenerMetrics lm = null;
        RunningListener same = listeners.get(l.name());
        if (same != null && same.config.protocol() == l.protocol()) {
            lm = same.metrics;
        }
        for (RunningListener r : retiring) {
            if (lm == null && r.config.name().equals(l.name()) && r.config.protocol() == l.protocol()) {
                lm = r.metrics;
            }
        }
        if (lm == null) {
            lm = new ListenerMetrics(registry, l.name(), protocol, metrics.recording());
        }
        ChannelGroup channels = new DefaultChannelGroup("sluice-" + l.name(), GlobalEventExecutor.INSTANCE);
        RouteTable empty = RouteTable.compile(List.of(), Map.of());
        ConnectionLimitHandler limits = new ConnectionLimitHandler(l, lm);
        if (l.protocol() == Protocol.BOLT) {
            BoltListenerContext ctx = new BoltListenerContext(l.name(), empty, l.bolt(), null, lm, workers, transport,
                    ticker, metrics::upstreamConnectionHandler);
            ctx.accessLog(accessLog);
            ctx.upstreamTls(clusters.upstreamTls()); // upstream TLS
            DownstreamTls tls = startTls(l, ctx);
            return new RunningListener(l, lm, listen(l, new BoltServerInitializer(ctx, channels), accepting, limits, tls),
                    channels, null, ctx::startDraining, ctx::closePools, ctx::upstreamConnections, tls, (lc, table) -> {
                        limits.update(lc);
                        updateTls(tls, lc);
                        String d = lc.bolt().defaultCluster();
                        ctx.update(table, lc.bolt(), d == null ? null : clusters.get(d));
                    });
        }
        if (l.protocol() == Protocol.AUTO) {
            return bindBoth(l, lm, channels, empty, accepting, limits);
        }
        HttpListenerContext ctx = new HttpListenerContext(l.name(), empty, l.http(), lm, workers, transport, ticker,
                metrics::cluster);
        ctx.accessLog(accessLog);
        ctx.upstreamTls(clusters.upstreamTls()); // upstream TLS
        DownstreamTls tls = startTls(l, ctx);
        Consumer<Host> hook = ctx::closeIdle;
        unavailableHooks.add(hook);
        return new RunningListener(l, lm, listen(l, new HttpServerInitializer(ctx, channels), accepting, limits, tls),
                channels, hook, ctx::startDraining, ctx::closePools, ctx::upstreamConnections, tls,
                (lc, table) -> {
                    limits.update(lc);
                    updateTls(tls, lc);
                    ctx.update(table, lc.http());
                });
    }

    /**
     * A listener with {@code "protocol": "auto"}: an HTTP and a Bolt listener context behind one
     * socket, sharing its meters and connection group; {@link ProtocolDetector} picks the pipeline
     * from each connection's first byte. A connection may stay silent up to the longer of the two
     * idle timeouts before that byte.
     */
    private RunningListener bindBoth(ListenerConfig l, ListenerMetrics lm, ChannelGroup channels, RouteTable empty,
                                     boolean accepting, ConnectionLimitHandler limits) {
        HttpListenerContext http = new HttpListenerContext(l.name(), empty, l.http(), lm, workers, transport, ticker,
                metrics::cluster);
        http.accessLog(accessLog);
        http.upstreamTls(clusters.upstreamTls()); // upstream TLS
        BoltListenerContext bolt = new BoltListenerContext(l.name(), empty, l.bolt(), null, lm, workers, transport,
                ticker, metrics::upstreamConnectionHandler);
        bolt.accessLog(accessLog);
        bolt.upstreamTls(clusters.upstreamTls()); // upstream TLS
        HttpServerInitializer httpPipeline = new HttpServerInitializer(http, channels);
        BoltServerInitializer boltPipeline = new BoltServerInitializer(bolt, channels);
        AtomicLong silence = new AtomicLong(silenceNanos(l));
        DownstreamTls tls = startTls(l, http);
        ChannelInitializer<SocketChannel> detect = new ChannelInitializer<>() {
            @Override
            protected void initChannel(SocketChannel ch) {
                channels.add(ch);
                ChannelHandler meter = lm.newConnectionHandler(http::draining);
                if (meter != null) {
                    ch.pipeline().addLast(SluicePipeline.METER, meter);
                }
                ch.pipeline().addLast(SluicePipeline.PROTOCOL_DETECTOR, new ProtocolDetector(c -> httpPipeline.configure(c),
                        c -> boltPipeline.configure(c), silence::get, http::draining, lm, http::scheduler).tls(tls));
            }
        };
        Consumer<Host> hook = http::closeIdle;
        unavailableHooks.add(hook);
        return new RunningListener(l, lm, listen(l, detect, accepting, limits, tls), channels, hook,
                () -> {
                    http.startDraining();
                    bolt.startDraining();
                },
                () -> {
                    http.closePools();
                    bolt.closePools();
                },
                () -> http.upstreamConnections() + bolt.upstreamConnections(), tls,
                (lc, table) -> {
                    limits.update(lc);
                    updateTls(tls, lc);
                    silence.set(silenceNanos(lc));
                    http.update(table, lc.http());
                    String d = lc.bolt().defaultCluster();
                    bolt.update(table, lc.bolt(), d == null ? null : clusters.get(d));
                });
    }

    /** Reload: new certificates or settings for new handshakes (files that do not load keep the running ones). */
    private static void updateTls(DownstreamTls tls, ListenerConfig lc) {
        if (tls != null && lc.tls() != null) {
            tls.update(lc.tls());
        }
    }

    /** How long a connection to an auto listener may stay silent before its first byte: the longer idle timeout. */
    private static long silenceNanos(ListenerConfig l) {
        return Math.max(l.http().idleTimeout().toNanos(), l.bolt().idleTimeout().toNanos());
    }

    /** Gives the routes of {@code table} their meters (before the table is published). */
    private void attachMeters(RunningListener rl, ListenerConfig l, RouteTable table) {
        rl.metrics.attach(table, metrics::cluster);
        if (rateLimiter != null) {
            rateLimiter.attach(table); // policy.ratelimit: the rules naming each route
        }
        if (l.protocol() != Protocol.HTTP) {
            String d = l.bolt().defaultCluster();
            rl.metrics.defaultCluster(d == null ? null : metrics.cluster(d));
        }
    }

    /** Undoes {@link #bind} of a listener that never accepted. */
    private void unbind(RunningListener rl) {
        rl.sockets.close();
        if (rl.tls != null) {
            rl.tls.stopWatching();
        }
        if (rl.hook != null) {
            unavailableHooks.remove(rl.hook);
        }
        rl.closePools.run();
        if (!metricsInUse(rl.metrics, rl)) {
            rl.metrics.close();
        }
    }

    private boolean metricsInUse(ListenerMetrics m, RunningListener except) {
        for (RunningListener r : listeners.values()) {
            if (r != except && r.metrics == m) {
                return true;
            }
        }
        for (RunningListener r : retiring) {
            if (r != except && r.metrics == m) {
                return true;
            }
        }
        return false;
    }

    // ------------------------------------------------------------------ retire and drain

    /**
     * Stops a listener a reload moved or removed: no more accepts, its connections are asked to
     * close (HTTP after their current response, Bolt once their pending requests are answered),
     * and whatever is still open at the drain timeout is closed.
     */
    private void retire(RunningListener rl, Duration drainTimeout) {
        String address = boundAddress(rl);
        rl.sockets.close();
        rl.startDraining.run();
        if (rl.hook != null) {
            unavailableHooks.remove(rl.hook);
        }
        retiring.add(rl);
        rl.channels.forEach(ch -> ch.pipeline().fireUserEventTriggered(DrainEvent.INSTANCE));
        log.info("listener {} stopped accepting on {}; draining {} connection(s)", rl.config.name(), address,
                rl.channels.size());
        awaitRetired(rl, address, ticker.nanoTime() + drainTimeout.toNanos());
    }

    private void awaitRetired(RunningListener rl, String address, long deadline) {
        if (!running.getAsBoolean()) {
            return; // shutdown drains it with everything else
        }
        boolean empty = rl.channels.isEmpty();
        if (!empty && ticker.nanoTime() - deadline < 0) {
            GlobalEventExecutor.INSTANCE.schedule(() -> awaitRetired(rl, address, deadline), 20, TimeUnit.MILLISECONDS);
            return;
        }
        int left = rl.channels.size();
        rl.channels.close().addListener(f -> {
            synchronized (this) {
                if (!retiring.remove(rl)) {
                    return;
                }
                if (rl.tls != null) {
                    rl.tls.stopWatching();
                }
                rl.closePools.run();
                if (!metricsInUse(rl.metrics, rl)) {
                    rl.metrics.close();
                }
            }
            if (left > 0) {
                log.warn("listener {} on {}: drain timeout, closed {} connection(s)", rl.config.name(), address, left);
            } else {
                log.info("listener {} on {} drained", rl.config.name(), address);
            }
        });
    }

    /**
     * Shutdown, first part: every listener stops accepting, keep-alive clients are asked to close;
     * completes once no request is in flight (Bolt connections get {@link BoltListenerContext#DRAIN_LINGER}
     * more to deliver their last answers) or at {@code timeout}, whichever is first. Connections
     * stay open: {@link #closeAll} closes them.
     */
    CompletableFuture<Void> drain(Duration timeout) {
        for (RunningListener l : all()) {
            l.startDraining.run();
            l.sockets.close();
            l.channels.forEach(ch -> ch.pipeline().fireUserEventTriggered(DrainEvent.INSTANCE));
        }
        CompletableFuture<Void> drained = new CompletableFuture<>();
        drainGraceUntil = ticker.nanoTime() + maxDrainGraceNanos();
        awaitDrained(drained, ticker.nanoTime() + timeout.toNanos(), hasBoltListener(), 0);
        return drained;
    }

    /**
     * @param bolt        whether a Bolt listener runs (its connections linger briefly after their last answer)
     * @param lingerUntil 0, or once nothing is in flight, the ticker time until which Bolt connections may linger
     */
    private void awaitDrained(CompletableFuture<Void> drained, long deadline, boolean bolt, long lingerUntil) {
        long now = ticker.nanoTime();
        boolean timedOut = now - deadline >= 0 || workers.isShuttingDown();
        int active = activeRequests();
        if (active == 0 || timedOut) {
            if (active > 0) {
                log.warn("drain timeout: closing {} request(s) still in flight", active);
            } else if (!timedOut && openConnections() > 0) {
                // Bolt connections close themselves DRAIN_LINGER after their last answer; closing them
                // sooner would race the bolt client's delivery of that answer. Idle HTTP connections
                // stay open for their listener's drain_grace, answering a request already on its way,
                // and then close themselves. Both end early once every connection is gone.
                if (lingerUntil == 0) {
                    lingerUntil = bolt ? now + BoltListenerContext.DRAIN_LINGER.toNanos() + TimeUnit.MILLISECONDS.toNanos(20)
                            : now;
                    long grace = drainGraceUntil + TimeUnit.MILLISECONDS.toNanos(20);
                    if (lingerUntil - grace < 0) {
                        lingerUntil = grace;
                    }
                }
                if (now - lingerUntil < 0) {
                    long until = lingerUntil;
                    GlobalEventExecutor.INSTANCE.schedule(() -> awaitDrained(drained, deadline, bolt, until),
                            POLL_MILLIS, TimeUnit.MILLISECONDS);
                    return;
                }
            }
            drained.complete(null);
            return;
        }
        GlobalEventExecutor.INSTANCE.schedule(() -> awaitDrained(drained, deadline, bolt, 0), POLL_MILLIS, TimeUnit.MILLISECONDS);
    }

    /** The longest {@code http.drain_grace} of the listeners that take HTTP. */
    private long maxDrainGraceNanos() {
        long max = 0;
        for (RunningListener l : all()) {
            if (l.config().protocol() != Protocol.BOLT) {
                max = Math.max(max, l.config().http().drainGrace().toNanos());
            }
        }
        return max;
    }

    /** Open client connections of every listener (running or retiring). */
    private int openConnections() {
        int n = 0;
        for (RunningListener l : all()) {
            n += l.channels.size();
        }
        return n;
    }

    private boolean hasBoltListener() {
        for (RunningListener l : listeners.values()) {
            if (l.config().protocol() != Protocol.HTTP) {
                return true;
            }
        }
        return false;
    }

    /** Shutdown, second part: closes every connection; completes when all are closed. Never blocks. */
    CompletableFuture<Void> closeAll() {
        List<CompletableFuture<Void>> closing = new ArrayList<>();
        for (RunningListener l : all()) {
            CompletableFuture<Void> c = new CompletableFuture<>();
            l.channels.close().addListener(f -> c.complete(null));
            closing.add(c);
        }
        return CompletableFuture.allOf(closing.toArray(CompletableFuture[]::new));
    }

    /** Shutdown, last part: closes the upstream pools and the listener meters. */
    void closeResources() {
        Set<ListenerMetrics> closed = Collections.newSetFromMap(new IdentityHashMap<>());
        for (RunningListener l : all()) {
            l.closePools.run();
            if (closed.add(l.metrics)) {
                l.metrics.close();
            }
            if (l.tls != null) {
                l.tls.close();
            }
        }
        synchronized (this) {
            if (tlsControlLoop != null) {
                tlsControlLoop.shutdownGracefully(0, 0, TimeUnit.MILLISECONDS);
            }
        }
    }

    private static String boundAddress(RunningListener rl) {
        SocketAddress a = rl.sockets.localAddress();
        return a instanceof InetSocketAddress ? Sockets.format(a) : Sockets.hostPort(rl.config.address(), rl.config.port());
    }

    /** Running and retiring listeners; a snapshot. */
    private synchronized List<RunningListener> all() {
        List<RunningListener> all = new ArrayList<>(listeners.values());
        all.addAll(retiring);
        return all;
    }

    /**
     * @param reconfigure swaps in a listener config's options and its route table (compiled against the running clusters)
     */
    private record RunningListener(ListenerConfig config, ListenerMetrics metrics,
                                   ListenSockets sockets, ChannelGroup channels,
                                   Consumer<Host> hook, Runnable startDraining,
                                   Runnable closePools, IntSupplier upstreamConnections,
                                   DownstreamTls tls,
                                   BiConsumer<ListenerConfig, RouteTable> reconfigure) {

        RunningListener withConfig(ListenerConfig c) {
            return new RunningListener(c, metrics, sockets, channels, hook, startDraining, closePools,
                    upstreamConnections, tls, reconfigure);
        }

        /** The sockets start accepting connections (they were bound with auto-read off). */
        void startAccepting() {
            sockets.startAccepting();
        }
    }
}
