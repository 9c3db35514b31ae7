package io.sluice.server;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.util.concurrent.GlobalEventExecutor;
import io.sluice.core.cluster.Host;
import io.sluice.core.config.ClusterConfig;
import io.sluice.core.config.ConfigException;
import io.sluice.core.config.GatewayConfig;
import io.sluice.core.config.ListenerConfig;
import io.sluice.core.config.Protocol;
import io.sluice.core.time.Ticker;
import io.sluice.lb.ClusterBalancer;
import io.sluice.lb.HealthCheckHub;
import io.sluice.lb.LbContext;
import io.sluice.server.accesslog.AccessLog;
import io.sluice.server.admin.AdminHandler;
import io.sluice.server.bolt.BoltListenerContext;
import io.sluice.server.bolt.BoltServerInitializer;
import io.sluice.server.http.DrainEvent;
import io.sluice.server.http.HttpListenerContext;
import io.sluice.server.http.HttpServerInitializer;
import io.sluice.server.health.NettyHealthProbes;
import io.sluice.server.metrics.ClusterEvents;
import io.sluice.server.metrics.ClusterMetrics;
import io.sluice.server.metrics.GatewayMetrics;
import io.sluice.server.config.ConfigJson;
import io.sluice.lb.HealthProbe;
import io.micrometer.core.instrument.config.MeterFilter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.sluice.server.metrics.HostGauges;
import io.sluice.server.metrics.ListenerMetrics;
import io.sluice.server.route.RouteTable;
import io.sluice.server.transport.EventLoopScheduler;
import io.sluice.server.transport.Transport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BiConsumer;
import java.util.function.IntSupplier;
import java.util.function.Supplier;
import java.util.random.RandomGenerator;

/**
 * A running Sluice gateway: its event loops, listeners, clusters and metrics. The embedding API:
 *
 * <pre>{@code
 * Gateway gw = Gateway.builder().config(config).build();
 * gw.start().join();
 * ...
 * gw.close(); // graceful: stop accepting, finish in-flight requests, close
 * }</pre>
 *
 * No static state: several gateways can run in one JVM without interfering.
 *
 * <p>Live reload: {@link #reload(GatewayConfig)} applies a new config in place (clusters, hosts,
 * weights, routes, timeouts, health checks, slow start, listener options, listeners added, removed
 * or moved to a new address); {@link #reload()} re-reads the {@linkplain Builder#reloadSource reload
 * source}. The admin listener and the transport cannot change without a restart: such a config is
 * rejected.
 */
public final class Gateway implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(Gateway.class);

    private enum Phase { NEW, STARTING, RUNNING, DRAINING, CLOSED }

    private volatile GatewayConfig config;
    private final Supplier<GatewayConfig> reloadSource;
    private final MeterRegistry registry;
    private final Ticker ticker;
    private final RandomGenerator random;
    private final Transport transport;
    /** One listening socket per worker (SO_REUSEPORT), see {@link #listen}. */
    private final boolean reusePort;
    /** Replaced as a whole on reload (copy on write); readers on any thread see a consistent map. */
    private volatile Map<String, ClusterBalancer> clusters = Map.of();
    private final Map<String, RunningListener> listeners = new LinkedHashMap<>();
    /** Shutdown: until when ({@link System#nanoTime()}, real time like the Bolt linger) idle HTTP connections may linger. */
    private volatile long drainGraceUntil;
    /** Listeners a reload moved or removed, draining until their connections are gone. */
    private final List<RunningListener> retiring = new java.util.concurrent.CopyOnWriteArrayList<>();
    private volatile Phase phase = Phase.NEW;
    /** Serves the admin API only (the listeners accept on the workers). */
    private EventLoopGroup adminLoop;
    private EventLoopGroup workers;
    private CompletableFuture<Void> closeFuture;
    private io.netty.channel.ChannelFuture admin;
    private final Map<String, List<Meter>> clusterMeters = new HashMap<>();
    /** True when the registry is the gateway's own (JVM binders go only there). */
    private final boolean ownRegistry;
    private GatewayMetrics metrics;
    private NettyHealthProbes probes;
    /** Probing loops shared by all clusters: an address listed by several clusters with the same check is probed once. */
    private final HealthCheckHub healthChecks = new HealthCheckHub();
    private HostGauges hostGauges;
    private ClusterEvents events;
    private final long createdNanos;
    private volatile long startedMillis;
    /** One line about the last reload (applied or rejected), for the status page; null before the first. */
    private volatile String lastReload;
    /** Run when a host fails its health check or is ejected (written at start, read from event loops). */
    private final List<java.util.function.Consumer<Host>> unavailableHooks = new java.util.concurrent.CopyOnWriteArrayList<>();
    private AccessLog accessLog;
    private final ChannelGroup adminChannels = new DefaultChannelGroup("sluice-admin", GlobalEventExecutor.INSTANCE);

    private Gateway(Builder b) {
        this.config = b.config;
        this.reloadSource = b.reloadSource;
        if (!config.admin().metrics()) {
            // metrics off: a private registry that records nothing (every meter is a no-op)
            SimpleMeterRegistry off = new SimpleMeterRegistry();
            off.config().meterFilter(MeterFilter.deny());
            this.registry = off;
            this.ownRegistry = true;
        } else {
            this.registry = b.registry != null ? b.registry : new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
            this.ownRegistry = b.registry == null;
        }
        this.ticker = b.ticker;
        this.createdNanos = System.nanoTime();
        this.random = b.random;
        this.transport = Transport.select(config.transport());
        this.reusePort = config.transport().reusePort() && transport.reusePortOption() != null;
        if (config.transport().reusePort() && !reusePort) {
            log.warn("transport.reuse_port ignored: the {} transport cannot share a port between sockets", transport.label());
        }
    }

    public static Builder builder() {
        return new Builder();
    }

    /** Binds every listener. Completes with this gateway once all listen, or exceptionally (and cleans up). */
    public synchronized CompletableFuture<Gateway> start() {
        if (phase != Phase.NEW) {
            return CompletableFuture.failedFuture(new IllegalStateException("gateway already started"));
        }
        phase = Phase.STARTING;
        int threads = config.transport().workerThreads() > 0
                ? config.transport().workerThreads() : Runtime.getRuntime().availableProcessors();
        adminLoop = transport.newGroup(1, "sluice-admin");
        workers = transport.newGroup(threads, "sluice-worker");
        CompletableFuture<Gateway> result = new CompletableFuture<>();
        probes = new NettyHealthProbes(workers, transport);
        hostGauges = new HostGauges(registry);
        accessLog = AccessLog.open(config.accessLog(), registry);
        events = new ClusterEvents(registry, host -> {
            for (java.util.function.Consumer<Host> hook : unavailableHooks) {
                hook.accept(host);
            }
        });
        metrics = new GatewayMetrics(registry, config.admin().metrics(), ownRegistry && config.admin().metrics());
        metrics.configHash(configHash(config));
        try {
            Map<String, ClusterBalancer> built = new LinkedHashMap<>();
            clusters = built; // filled here under the start lock; shutdown closes what was built if start fails
            for (ClusterConfig c : config.clusters()) {
                built.put(c.name(), newBalancer(c));
            }
            List<CompletableFuture<?>> binds = new ArrayList<>();
            for (ListenerConfig l : config.listeners()) {
                RunningListener rl = bind(l, false);
                RouteTable table = RouteTable.compile(l.routes(), built);
                attachMeters(rl, l, table);
                rl.reconfigure.accept(l, table);
                rl.startAccepting();
                listeners.put(l.name(), rl);
                binds.add(rl.sockets.bound());
            }
            if (config.admin().enabled()) {
                admin = bindAdmin();
                binds.add(toCompletable(admin));
            }
            CompletableFuture<?>[] all = binds.toArray(CompletableFuture[]::new);
            CompletableFuture.allOf(all).whenComplete((v, err) -> {
                if (err != null) {
                    Throwable cause = err.getCause() != null ? err.getCause() : err;
                    shutdown().whenComplete((x, y) -> result.completeExceptionally(cause));
                } else {
                    phase = Phase.RUNNING;
                    startedMillis = System.currentTimeMillis();
                    log.info("sluice started: transport={} workers={}{} listeners={}{}", transport.label(), threads,
                            reusePort ? " reuse_port" : "",
                            listeners.keySet(), admin == null ? "" : " admin=" + adminAddress());
                    result.complete(this);
                }
            });
        } catch (RuntimeException e) {
            shutdown().whenComplete((x, y) -> result.completeExceptionally(e));
        }
        return result;
    }

    /** A balancer wired like every other (probes, state-change events, gauges). Caller holds the lock. */
    private ClusterBalancer newBalancer(ClusterConfig c) {
        LbContext ctx = new LbContext(new EventLoopScheduler(workers.next(), ticker), random)
                .withProbes(this::countedProbe).withListener(events).withHealthChecks(healthChecks);
        ClusterBalancer balancer = ClusterBalancer.create(c, ctx);
        metrics.addCluster(balancer);
        List<Meter> meters = new ArrayList<>();
        meters.add(Gauge.builder("sluice.cluster.hosts.available", balancer,
                        b -> b.hosts().stream().filter(Host::available).count())
                .tags("cluster", c.name()).description("Hosts the balancer may pick (healthy, not ejected)")
                .register(registry));
        meters.add(Gauge.builder("sluice.cluster.hosts", balancer, b -> b.hosts().size())
                .tags("cluster", c.name()).description("Hosts configured").register(registry));
        meters.add(Gauge.builder("sluice.cluster.panic", balancer, b -> b.panicking() ? 1 : 0)
                .tags("cluster", c.name()).description("1 while the cluster balances over all hosts").register(registry));
        clusterMeters.put(c.name(), meters);
        hostGauges.sync(balancer);
        return balancer;
    }

    /** A health probe whose attempts count in {@code sluice.health_check.attempts}. */
    private HealthProbe countedProbe(ClusterConfig c) {
        HealthProbe p = probes.create(c);
        if (p == null || !metrics.recording()) {
            return p;
        }
        String name = c.name();
        return (host, callback) -> {
            ClusterMetrics cm = metrics.cluster(name);
            (cm == null ? p : cm.countProbes(p)).probe(host, callback);
        };
    }

    /** Removes the gauges of a cluster (they hold the balancer). Caller holds the lock. */
    private void removeClusterGauges(String name) {
        List<Meter> meters = clusterMeters.remove(name);
        if (meters != null) {
            meters.forEach(registry::remove);
        }
        hostGauges.remove(name);
    }

    /**
     * Binds a data-path listener. It accepts on a worker loop, not a separate acceptor thread:
     * handing each accepted connection from such a thread to a worker costs a thread switch per
     * connection (a fifth of the gateway's CPU in a connection-churn run on one core). With one
     * socket, the accepting loop still hands (N-1)/N of the connections to the other workers; with
     * {@code transport.reuse_port} every worker has its own socket on the port and keeps what it accepts.
     */
    private ListenSockets listen(ListenerConfig l, ChannelInitializer<SocketChannel> pipeline, boolean accepting,
                                 io.sluice.server.transport.ConnectionLimitHandler limits) {
        ServerBootstrap template = new ServerBootstrap()
                .channel(transport.serverChannel())
                .handler(limits) // max_connections, max_connections_per_client: refused before a pipeline exists
                .option(ChannelOption.SO_BACKLOG, config.transport().backlog())
                .option(ChannelOption.SO_REUSEADDR, true)
                .option(ChannelOption.AUTO_READ, accepting) // a reload binds first and accepts once routes are in
                // Netty's socket channels already enable TCP_NODELAY where they can (Linux, macOS, ...):
                // setting it again costs one setsockopt per accepted connection (visible in churn runs)
                .childOption(ChannelOption.TCP_NODELAY, !io.netty.util.internal.PlatformDependent.canEnableTcpNoDelayByDefault()
                        ? Boolean.TRUE : null)
                .childOption(ChannelOption.ALLOCATOR, Transport.allocator())
                .childHandler(pipeline);
        return ListenSockets.bind(template, workers, reusePort ? transport.reusePortOption() : null, l.address(), l.port());
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
        io.sluice.server.transport.ConnectionLimitHandler limits = new io.sluice.server.transport.ConnectionLimitHandler(l, lm);
        if (l.protocol() == Protocol.BOLT) {
            BoltListenerContext ctx = new BoltListenerContext(l.name(), empty, l.bolt(), null, lm, workers, transport,
                    ticker, metrics::upstreamConnectionHandler);
            ctx.accessLog(accessLog);
            return new RunningListener(l, lm, listen(l, new BoltServerInitializer(ctx, channels), accepting, limits), channels,
                    null, ctx::startDraining, ctx::closePools, ctx::upstreamConnections, (lc, table) -> {
                        limits.update(lc);
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
        java.util.function.Consumer<Host> hook = ctx::closeIdle;
        unavailableHooks.add(hook);
        return new RunningListener(l, lm, listen(l, new HttpServerInitializer(ctx, channels), accepting, limits), channels,
                hook, ctx::startDraining, ctx::closePools, ctx::idleUpstreamConnections,
                (lc, table) -> {
                    limits.update(lc);
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
                                     boolean accepting, io.sluice.server.transport.ConnectionLimitHandler limits) {
        HttpListenerContext http = new HttpListenerContext(l.name(), empty, l.http(), lm, workers, transport, ticker,
                metrics::cluster);
        http.accessLog(accessLog);
        BoltListenerContext bolt = new BoltListenerContext(l.name(), empty, l.bolt(), null, lm, workers, transport,
                ticker, metrics::upstreamConnectionHandler);
        bolt.accessLog(accessLog);
        HttpServerInitializer httpPipeline = new HttpServerInitializer(http, channels);
        BoltServerInitializer boltPipeline = new BoltServerInitializer(bolt, channels);
        java.util.concurrent.atomic.AtomicLong silence = new java.util.concurrent.atomic.AtomicLong(silenceNanos(l));
        ChannelInitializer<SocketChannel> detect = new ChannelInitializer<>() {
            @Override
            protected void initChannel(SocketChannel ch) {
                channels.add(ch);
                io.netty.channel.ChannelHandler meter = lm.newConnectionHandler(http::draining);
                if (meter != null) {
                    ch.pipeline().addLast("meter", meter);
                }
                ch.pipeline().addLast("protocol-detector", new ProtocolDetector(c -> httpPipeline.configure(c, false),
                        c -> boltPipeline.configure(c, false), silence::get, http::draining, lm));
            }
        };
        java.util.function.Consumer<Host> hook = http::closeIdle;
        unavailableHooks.add(hook);
        return new RunningListener(l, lm, listen(l, detect, accepting, limits), channels, hook,
                () -> {
                    http.startDraining();
                    bolt.startDraining();
                },
                () -> {
                    http.closePools();
                    bolt.closePools();
                },
                () -> http.idleUpstreamConnections() + bolt.upstreamConnections(),
                (lc, table) -> {
                    limits.update(lc);
                    silence.set(silenceNanos(lc));
                    http.update(table, lc.http());
                    String d = lc.bolt().defaultCluster();
                    bolt.update(table, lc.bolt(), d == null ? null : clusters.get(d));
                });
    }

    /** How long a connection to an auto listener may stay silent before its first byte: the longer idle timeout. */
    private static long silenceNanos(ListenerConfig l) {
        return Math.max(l.http().idleTimeout().toNanos(), l.bolt().idleTimeout().toNanos());
    }

    /** Gives the routes of {@code table} their meters (before the table is published). Caller holds the lock. */
    private void attachMeters(RunningListener rl, ListenerConfig l, RouteTable table) {
        rl.metrics.attach(table, metrics::cluster);
        if (l.protocol() != Protocol.HTTP) {
            String d = l.bolt().defaultCluster();
            rl.metrics.defaultCluster(d == null ? null : metrics.cluster(d));
        }
    }

    private static int configHash(GatewayConfig c) {
        java.util.zip.CRC32 crc = new java.util.zip.CRC32();
        crc.update(ConfigJson.render(c).getBytes(java.nio.charset.StandardCharsets.UTF_8));
        return (int) crc.getValue();
    }

    private io.netty.channel.ChannelFuture bindAdmin() {
        AdminHandler handler = new AdminHandler(registry, this::clusters, () -> phase == Phase.RUNNING, this::config,
                reloadSource == null ? null : () -> reload().summary(), new AdminHandler.Status() {
                    @Override
                    public List<AdminHandler.ListenerInfo> listeners() {
                        return listenerInfo();
                    }

                    @Override
                    public String lastReload() {
                        return lastReload;
                    }

                    @Override
                    public long configVersion() {
                        return Gateway.this.configVersion();
                    }

                    @Override
                    public long uptimeMillis() {
                        long t = startedMillis;
                        return t == 0 ? 0 : System.currentTimeMillis() - t;
                    }

                    @Override
                    public boolean metricsOn() {
                        return config.admin().metrics();
                    }
                });
        ServerBootstrap b = new ServerBootstrap()
                .group(adminLoop) // not the workers: the admin API answers even when the data path is saturated
                .channel(transport.serverChannel())
                .option(ChannelOption.SO_REUSEADDR, true)
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        adminChannels.add(ch);
                        ch.pipeline().addLast(new HttpServerCodec(), new HttpObjectAggregator(64 * 1024), handler);
                    }
                });
        return b.bind(config.admin().address(), config.admin().port());
    }

    /** Listeners for the status page: running ones, then those draining after a reload. */
    private List<AdminHandler.ListenerInfo> listenerInfo() {
        List<AdminHandler.ListenerInfo> out = new ArrayList<>();
        for (RunningListener l : allListeners()) {
            out.add(new AdminHandler.ListenerInfo(l.config.name(), l.config.protocol().jsonName(),
                    boundAddress(l), l.channels.size(), l.metrics.activeRequests(), retiring.contains(l)));
        }
        return out;
    }

    /** The bound address of the admin API, or null when it is disabled. */
    public InetSocketAddress adminAddress() {
        return admin == null ? null : (InetSocketAddress) admin.channel().localAddress();
    }

    private static CompletableFuture<Channel> toCompletable(io.netty.channel.ChannelFuture f) {
        CompletableFuture<Channel> c = new CompletableFuture<>();
        f.addListener(x -> {
            if (x.isSuccess()) {
                c.complete(f.channel());
            } else {
                c.completeExceptionally(new java.io.IOException("cannot bind " + f.channel().localAddress()
                        + ": " + x.cause().getMessage(), x.cause()));
            }
        });
        return c;
    }

    /** The running configuration. */
    public GatewayConfig config() {
        return config;
    }

    /** The version of the running config: 1 as started, plus one per successful reload. */
    public long configVersion() {
        return metrics == null ? 1 : metrics.version();
    }

    /**
     * Re-reads the {@linkplain Builder#reloadSource reload source} and applies it like
     * {@link #reload(GatewayConfig)}. Blocks while the source reads its file: call it off the event loops.
     *
     * @throws ConfigException       if the source's config is invalid or cannot be applied (the old one keeps running)
     * @throws IllegalStateException if the gateway has no reload source or is not running
     */
    public ReloadResult reload() {
        if (reloadSource == null) {
            throw new IllegalStateException("this gateway has no reload source: it was configured in code"
                    + " (embedded, or the jar's demo mode without -c); call Gateway.reload(GatewayConfig)");
        }
        checkRunning();
        GatewayConfig next;
        try {
            next = reloadSource.get();
        } catch (ConfigException e) {
            rejected(e);
            throw e;
        }
        return reload(next);
    }

    /**
     * Applies {@code newConfig} to the running gateway without dropping traffic. Synchronous
     * (reloads are serialized); it waits for new listener sockets to bind, so call it off the
     * event loops.
     *
     * <p>The config is checked completely before anything changes: the records validate themselves
     * when built, and here the admin listener and the transport must equal the running ones
     * (changing them needs a restart; such a config is rejected with a {@link ConfigException}
     * naming the JSON path). Listeners that are new, or whose address, port or protocol changed,
     * are bound first — if one cannot bind, the reload is rejected and nothing changes. Then:
     * <ul>
     *   <li>clusters added get a new balancer (probes, events, meters); removed ones are closed once
     *       the new route tables no longer reference them (requests in flight to them finish) and
     *       their meters are removed; changed ones are {@linkplain ClusterBalancer#update updated}:
     *       kept hosts keep health, ejection state and warm-up clock, added hosts warm up. A cluster
     *       whose protocol changes is replaced by a new balancer.</li>
     *   <li>every kept listener gets a new route table and options, swapped atomically: the next request
     *       on every connection uses them, requests in flight finish on the old route. Route meters of
     *       routes no longer present are deleted.</li>
     *   <li>new and moved listeners start accepting; the old socket of a moved listener and removed
     *       listeners stop accepting and drain: HTTP connections get {@code Connection: close} on
     *       their next response (idle ones close now), Bolt connections close once their pending
     *       requests are answered, whatever is left closes at the drain timeout.</li>
     *   <li>the drain timeout applies to the next shutdown.</li>
     * </ul>
     * Counts {@code sluice.config.reloads{result}}, bumps {@code sluice.config.version}, logs one line.
     *
     * @throws ConfigException       if the config cannot be applied (nothing changed)
     * @throws IllegalStateException if the gateway is not running
     */
    public synchronized ReloadResult reload(GatewayConfig newConfig) {
        Objects.requireNonNull(newConfig, "newConfig");
        checkRunning();
        Map<String, RunningListener> bound;
        try {
            checkReloadable(newConfig);
            bound = bindChanged(newConfig);
        } catch (ConfigException e) {
            rejected(e);
            throw e;
        }
        GatewayConfig old = config;
        Map<String, ClusterBalancer> running = clusters;
        Map<String, ClusterBalancer> next = new LinkedHashMap<>();
        List<String> added = new ArrayList<>();
        List<String> updated = new ArrayList<>();
        List<ClusterBalancer> retired = new ArrayList<>();
        for (ClusterConfig c : newConfig.clusters()) {
            ClusterBalancer b = running.get(c.name());
            if (b == null) {
                next.put(c.name(), newBalancer(c));
                added.add(c.name());
            } else if (b.config().equals(c)) {
                next.put(c.name(), b);
            } else if (b.config().protocol() != c.protocol()) {
                retired.add(b);
                removeClusterGauges(c.name());
                next.put(c.name(), newBalancer(c));
                updated.add(c.name());
            } else {
                b.update(c);
                hostGauges.sync(b);
                next.put(c.name(), b);
                updated.add(c.name());
            }
        }
        List<String> removed = new ArrayList<>();
        for (ClusterBalancer b : running.values()) {
            if (!next.containsKey(b.name())) {
                retired.add(b);
                removed.add(b.name());
            }
        }
        Map<String, ClusterBalancer> published = Collections.unmodifiableMap(next);
        // compile every table before swapping any (compile only fails on a bug: the config validated its clusters)
        Map<String, RouteTable> tables = new HashMap<>();
        for (ListenerConfig l : newConfig.listeners()) {
            tables.put(l.name(), RouteTable.compile(l.routes(), published));
        }
        clusters = published;
        List<String> changedListeners = new ArrayList<>();
        List<RunningListener> toRetire = new ArrayList<>();
        Map<String, RunningListener> nextListeners = new LinkedHashMap<>();
        for (ListenerConfig l : newConfig.listeners()) {
            RouteTable table = tables.get(l.name());
            RunningListener was = listeners.get(l.name());
            RunningListener rl = bound.get(l.name());
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
                changedListeners.add(l.name());
            } else {
                attachMeters(was, l, table);
                was.reconfigure.accept(l, table);
                if (!was.config.equals(l)) {
                    changedListeners.add(l.name());
                }
                rl = was.withConfig(l);
            }
            nextListeners.put(l.name(), rl);
        }
        List<String> removedListeners = new ArrayList<>();
        for (RunningListener rl : listeners.values()) {
            if (!nextListeners.containsKey(rl.config.name())) {
                toRetire.add(rl);
                removedListeners.add(rl.config.name());
            }
        }
        listeners.clear();
        listeners.putAll(nextListeners);
        for (RunningListener rl : toRetire) {
            retire(rl, newConfig.drainTimeout());
        }
        // no route references a retired balancer any more; in-flight requests keep their host and finish
        for (ClusterBalancer b : retired) {
            b.close();
        }
        for (String name : removed) {
            removeClusterGauges(name);
            metrics.removeCluster(name);
            for (Meter m : registry.getMeters()) {
                String n = m.getId().getName();
                if ((n.startsWith("sluice.cluster.") || n.startsWith("sluice.upstream.") || n.startsWith("sluice.health_check."))
                        && name.equals(m.getId().getTag("cluster"))) {
                    registry.remove(m);
                }
            }
        }
        config = newConfig;
        long version = metrics.version() + 1;
        metrics.reloaded(version, configHash(newConfig));
        ReloadResult result = new ReloadResult(version, added, removed, updated, changedListeners);
        StringBuilder extra = new StringBuilder();
        if (!bound.isEmpty()) {
            extra.append("; listening on");
            bound.forEach((n, rl) -> extra.append(' ').append(n).append('=').append(boundAddress(rl)));
        }
        if (!removedListeners.isEmpty()) {
            extra.append("; listeners removed ").append(removedListeners);
        }
        if (!old.drainTimeout().equals(newConfig.drainTimeout())) {
            extra.append("; drain_timeout ").append(newConfig.drainTimeout());
        }
        log.info("config reloaded: {}{}", result.summary(), extra);
        lastReload = java.time.Instant.now() + " applied: " + result.summary() + extra;
        return result;
    }

    /**
     * Binds the listeners of {@code next} that are new or whose address, port or protocol changed
     * (not accepting yet). If one cannot bind, closes those bound and throws a {@link ConfigException}
     * naming its path. Caller holds the lock.
     */
    private Map<String, RunningListener> bindChanged(GatewayConfig next) {
        Map<String, RunningListener> bound = new LinkedHashMap<>();
        for (int i = 0; i < next.listeners().size(); i++) {
            ListenerConfig l = next.listeners().get(i);
            RunningListener r = listeners.get(l.name());
            if (r != null && r.config.protocol() == l.protocol() && r.config.address().equals(l.address())
                    && r.config.port() == l.port()) {
                continue;
            }
            RunningListener rl = bind(l, false);
            bound.put(l.name(), rl);
            Throwable failed = rl.sockets.awaitBound();
            if (failed != null) {
                for (RunningListener b : bound.values()) {
                    unbind(b);
                }
                String why = failed.getMessage() == null ? "bind failed" : failed.getMessage();
                throw new ConfigException("$.listeners[" + i + "].port", l.port(), "an address and port this gateway can bind (binding "
                        + l.address() + ":" + l.port() + " failed: " + why + ")");
            }
        }
        return bound;
    }

    /** Undoes {@link #bind} of a listener that never accepted. */
    private void unbind(RunningListener rl) {
        rl.sockets.close();
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

    /**
     * Stops a listener a reload moved or removed: no more accepts, its connections are asked to
     * close (HTTP after their current response, Bolt once their pending requests are answered),
     * and whatever is still open at the drain timeout is closed. Caller holds the lock.
     */
    private void retire(RunningListener rl, java.time.Duration drainTimeout) {
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
        if (phase != Phase.RUNNING) {
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

    private static String boundAddress(RunningListener rl) {
        java.net.SocketAddress a = rl.sockets.localAddress();
        if (a instanceof InetSocketAddress i) {
            return i.getHostString() + ":" + i.getPort();
        }
        return rl.config.address() + ":" + rl.config.port();
    }

    private void checkRunning() {
        if (phase != Phase.RUNNING) {
            throw new IllegalStateException("cannot reload: the gateway is " + phase.name().toLowerCase(java.util.Locale.ROOT));
        }
    }

    private void rejected(ConfigException e) {
        if (metrics != null) {
            metrics.reloadRejected();
        }
        log.warn("config reload rejected, version {} keeps running: {}", configVersion(), e.getMessage());
        lastReload = java.time.Instant.now() + " rejected (version " + configVersion() + " keeps running): " + e.getMessage();
    }

    /**
     * What a reload cannot change: the admin listener, the transport, and the protocol of a
     * listener that keeps its address (the old socket holds the port while it drains).
     */
    private void checkReloadable(GatewayConfig next) {
        GatewayConfig cur = config;
        for (int i = 0; i < next.listeners().size(); i++) {
            ListenerConfig l = next.listeners().get(i);
            RunningListener r = listeners.get(l.name());
            if (r != null && r.config.protocol() != l.protocol() && r.config.address().equals(l.address())
                    && r.config.port() == l.port() && l.port() != 0) {
                throw new ConfigException("$.listeners[" + i + "].protocol", l.protocol().jsonName(),
                        "the running " + r.config.protocol().jsonName()
                                + " while the listener keeps its port (give it a new port, or restart)");
            }
        }
        if (!cur.admin().equals(next.admin())) {
            throw new ConfigException("$.admin", next.admin(), "the running " + cur.admin() + " (changing the admin listener needs a restart)");
        }
        if (!cur.transport().equals(next.transport())) {
            throw new ConfigException("$.transport", next.transport(), "the running " + cur.transport() + " (changing the transport needs a restart)");
        }
    }

    public MeterRegistry meterRegistry() {
        return registry;
    }

    /** The transport in use: epoll, io_uring or nio. */
    public String transport() {
        return transport.label();
    }

    /** The bound address of a listener (useful with port 0). */
    public InetSocketAddress address(String listener) {
        RunningListener l = Objects.requireNonNull(listeners.get(listener), () -> "no listener " + listener);
        return (InetSocketAddress) l.sockets.localAddress();
    }

    public int port(String listener) {
        return address(listener).getPort();
    }

    /** The balancer of a cluster (hosts, health, picks), or null. */
    public ClusterBalancer cluster(String name) {
        return clusters.get(name);
    }

    public Map<String, ClusterBalancer> clusters() {
        return Collections.unmodifiableMap(clusters);
    }

    /** Requests in flight on all listeners. */
    public int activeRequests() {
        java.util.Set<ListenerMetrics> seen = java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());
        int n = 0;
        for (RunningListener l : allListeners()) {
            if (seen.add(l.metrics)) {
                n += l.metrics.activeRequests();
            }
        }
        return n;
    }

    /**
     * Upstream connections of a listener (approximate; for tests and the admin API): HTTP, the
     * parked keep-alive ones; Bolt, the open multiplexed ones.
     */
    public int idleUpstreamConnections(String listener) {
        return listeners.get(listener).upstreamConnections.getAsInt();
    }

    /**
     * Graceful shutdown: stop accepting, ask keep-alive clients to close, let in-flight requests
     * finish until the drain timeout, then close everything.
     */
    public synchronized CompletableFuture<Void> shutdown() {
        if (closeFuture != null) {
            return closeFuture;
        }
        closeFuture = new CompletableFuture<>();
        phase = Phase.DRAINING;
        for (RunningListener l : allListeners()) {
            l.startDraining.run();
            l.sockets.close();
            l.channels.forEach(ch -> ch.pipeline().fireUserEventTriggered(DrainEvent.INSTANCE));
        }
        long deadline = ticker.nanoTime() + config.drainTimeout().toNanos();
        drainGraceUntil = System.nanoTime() + maxDrainGraceNanos();
        if (workers == null) {
            finishClose();
        } else {
            awaitDrained(deadline, hasBoltListener(), 0);
        }
        return closeFuture;
    }

    /**
     * @param bolt        whether a Bolt listener runs (its connections linger briefly after their last answer)
     * @param lingerUntil 0, or once nothing is in flight, the {@link System#nanoTime()} until which Bolt
     *                    connections may linger (real time: a test's manual ticker must not stall the shutdown)
     */
    private void awaitDrained(long deadline, boolean bolt, long lingerUntil) {
        long now = ticker.nanoTime();
        boolean timedOut = now - deadline >= 0 || workers.isShuttingDown();
        if (activeRequests() == 0 || timedOut) {
            if (activeRequests() > 0) {
                log.warn("drain timeout: closing {} request(s) still in flight", activeRequests());
            } else if (!timedOut && openConnections() > 0) {
                // Bolt connections close themselves DRAIN_LINGER after their last answer; closing them
                // sooner would race the bolt client's delivery of that answer. Idle HTTP connections
                // stay open for their listener's drain_grace, answering a request already on its way,
                // and then close themselves. Both end early once every connection is gone.
                long real = System.nanoTime();
                if (lingerUntil == 0) {
                    lingerUntil = bolt ? real + io.sluice.server.bolt.BoltListenerContext.DRAIN_LINGER.toNanos()
                            + TimeUnit.MILLISECONDS.toNanos(20) : real;
                    long grace = drainGraceUntil + TimeUnit.MILLISECONDS.toNanos(20);
                    if (lingerUntil - grace < 0) {
                        lingerUntil = grace;
                    }
                }
                if (real - lingerUntil < 0) {
                    long until = lingerUntil;
                    GlobalEventExecutor.INSTANCE.schedule(() -> awaitDrained(deadline, bolt, until), 10, TimeUnit.MILLISECONDS);
                    return;
                }
            }
            finishClose();
            return;
        }
        GlobalEventExecutor.INSTANCE.schedule(() -> awaitDrained(deadline, bolt, 0), 10, TimeUnit.MILLISECONDS);
    }

    /** The longest {@code http.drain_grace} of the listeners that take HTTP. */
    private long maxDrainGraceNanos() {
        long max = 0;
        for (RunningListener l : allListeners()) {
            if (l.config().protocol() != Protocol.BOLT) {
                max = Math.max(max, l.config().http().drainGrace().toNanos());
            }
        }
        return max;
    }

    /** Open client connections of every listener (running or retiring). */
    private int openConnections() {
        int n = 0;
        for (RunningListener l : allListeners()) {
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

    private void finishClose() {
        // never block here: this may run on the GlobalEventExecutor, which also completes the group future
        if (admin != null) {
            admin.channel().close();
            adminChannels.close();
        }
        List<CompletableFuture<Void>> closing = new ArrayList<>();
        for (RunningListener l : allListeners()) {
            CompletableFuture<Void> c = new CompletableFuture<>();
            l.channels.close().addListener(f -> c.complete(null));
            closing.add(c);
        }
        CompletableFuture.allOf(closing.toArray(CompletableFuture[]::new)).whenComplete((v, e) -> closeResources());
    }

    private void closeResources() {
        try {
            java.util.Set<ListenerMetrics> closed = java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());
            for (RunningListener l : allListeners()) {
                l.closePools.run();
                if (closed.add(l.metrics)) {
                    l.metrics.close();
                }
            }
            synchronized (this) {
                for (ClusterBalancer c : clusters.values()) {
                    c.close();
                }
                for (List<Meter> ms : clusterMeters.values()) {
                    ms.forEach(registry::remove);
                }
                clusterMeters.clear();
                if (metrics != null) {
                    metrics.close();
                }
            }
            if (accessLog != null) {
                accessLog.close(); // after the listeners: the last requests are written
            }
        } catch (RuntimeException e) {
            log.warn("error while closing; shutting the event loops down anyway", e);
        }
        CompletableFuture<?> b = adminLoop == null ? CompletableFuture.completedFuture(null) : toFuture(adminLoop);
        CompletableFuture<?> w = workers == null ? CompletableFuture.completedFuture(null) : toFuture(workers);
        CompletableFuture.allOf(b, w).whenComplete((v, e) -> {
            phase = Phase.CLOSED;
            log.info("sluice stopped");
            closeFuture.complete(null);
        });
    }

    private static CompletableFuture<Void> toFuture(EventLoopGroup g) {
        CompletableFuture<Void> f = new CompletableFuture<>();
        g.shutdownGracefully(0, 2, TimeUnit.SECONDS).addListener(x -> f.complete(null));
        return f;
    }

    /** Graceful shutdown, waiting for it. */
    @Override
    public void close() {
        shutdown().join();
    }

    /**
     * @param reconfigure swaps in a listener config's options and its route table (compiled against the running clusters)
     */
    private record RunningListener(ListenerConfig config, ListenerMetrics metrics,
                                   ListenSockets sockets, ChannelGroup channels,
                                   java.util.function.Consumer<Host> hook, Runnable startDraining,
                                   Runnable closePools, IntSupplier upstreamConnections,
                                   BiConsumer<ListenerConfig, RouteTable> reconfigure) {

        RunningListener withConfig(ListenerConfig c) {
            return new RunningListener(c, metrics, sockets, channels, hook, startDraining, closePools,
                    upstreamConnections, reconfigure);
        }

        /** The sockets start accepting connections (they were bound with auto-read off). */
        void startAccepting() {
            sockets.startAccepting();
        }
    }

    /** Running and retiring listeners; a snapshot. */
    private synchronized List<RunningListener> allListeners() {
        List<RunningListener> all = new ArrayList<>(listeners.values());
        all.addAll(retiring);
        return all;
    }

    /** Builds a {@link Gateway}. Only {@link #config} is required. */
    public static final class Builder {
        private GatewayConfig config;
        private MeterRegistry registry;
        private Ticker ticker = Ticker.system();
        private RandomGenerator random = new SplittableRandom();
        private Supplier<GatewayConfig> reloadSource;

        private Builder() {
        }

        public Builder config(GatewayConfig config) {
            this.config = config;
            return this;
        }

        /** Where meters go; default: a new {@code PrometheusMeterRegistry}. */
        public Builder meterRegistry(MeterRegistry registry) {
            this.registry = registry;
            return this;
        }

        public Builder ticker(Ticker ticker) {
            this.ticker = Objects.requireNonNull(ticker);
            return this;
        }

        /** Random source for load-balancer pre-picks and health-check jitter (seed it in tests). */
        public Builder random(RandomGenerator random) {
            this.random = Objects.requireNonNull(random);
            return this;
        }

        /**
         * Where {@link Gateway#reload()}, the admin {@code POST /reload} and (in the standalone jar)
         * SIGHUP get the new config from, typically {@code () -> ConfigLoader.load(path).config()}. It
         * may block (file I/O) and throw {@link ConfigException}. Default: none (reload answers 409).
         */
        public Builder reloadSource(Supplier<GatewayConfig> source) {
            this.reloadSource = source;
            return this;
        }

        public Gateway build() {
            Objects.requireNonNull(config, "config");
            return new Gateway(this);
        }
    }
}
