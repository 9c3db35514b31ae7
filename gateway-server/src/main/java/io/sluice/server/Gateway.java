package io.sluice.server;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.PooledByteBufAllocator;
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
 * weights, routes, timeouts, health checks, slow start, listener options); {@link #reload()} re-reads
 * the {@linkplain Builder#reloadSource reload source}. Listener binds, the admin listener and the
 * transport cannot change without a restart: such a config is rejected.
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
    /** Replaced as a whole on reload (copy on write); readers on any thread see a consistent map. */
    private volatile Map<String, ClusterBalancer> clusters = Map.of();
    private final Map<String, RunningListener> listeners = new LinkedHashMap<>();
    private final ChannelGroup downstream = new DefaultChannelGroup("sluice-downstream", GlobalEventExecutor.INSTANCE);
    private volatile Phase phase = Phase.NEW;
    private EventLoopGroup boss;
    private EventLoopGroup workers;
    private CompletableFuture<Void> closeFuture;
    private io.netty.channel.ChannelFuture admin;
    private final Map<String, List<Meter>> clusterMeters = new HashMap<>();
    private final List<Meter> gatewayMeters = new ArrayList<>();
    private final AtomicLong configVersion = new AtomicLong(1);
    private NettyHealthProbes probes;
    private ClusterEvents events;
    private Counter reloadSuccesses;
    private Counter reloadFailures;
    /** Run when a host fails its health check or is ejected (written at start, read from event loops). */
    private final List<java.util.function.Consumer<Host>> unavailableHooks = new java.util.concurrent.CopyOnWriteArrayList<>();
    private AccessLog accessLog;
    private final ChannelGroup adminChannels = new DefaultChannelGroup("sluice-admin", GlobalEventExecutor.INSTANCE);

    private Gateway(Builder b) {
        this.config = b.config;
        this.reloadSource = b.reloadSource;
        this.registry = b.registry != null ? b.registry : new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        this.ticker = b.ticker;
        this.random = b.random;
        this.transport = Transport.select(config.transport());
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
        boss = transport.newGroup(1, "sluice-boss");
        workers = transport.newGroup(threads, "sluice-worker");
        CompletableFuture<Gateway> result = new CompletableFuture<>();
        probes = new NettyHealthProbes(workers, transport);
        accessLog = AccessLog.open(config.accessLog(), registry);
        events = new ClusterEvents(registry, host -> {
            for (java.util.function.Consumer<Host> hook : unavailableHooks) {
                hook.accept(host);
            }
        });
        reloadSuccesses = Counter.builder("sluice.config.reloads").tag("result", "success")
                .description("Config reloads applied (success) or rejected (failure)").register(registry);
        reloadFailures = Counter.builder("sluice.config.reloads").tag("result", "failure")
                .description("Config reloads applied (success) or rejected (failure)").register(registry);
        gatewayMeters.add(reloadSuccesses);
        gatewayMeters.add(reloadFailures);
        gatewayMeters.add(Gauge.builder("sluice.config.version", configVersion, AtomicLong::get)
                .description("Version of the running config: 1 at start, +1 per successful reload").register(registry));
        try {
            Map<String, ClusterBalancer> built = new LinkedHashMap<>();
            clusters = built; // filled here under the start lock; shutdown closes what was built if start fails
            for (ClusterConfig c : config.clusters()) {
                built.put(c.name(), newBalancer(c));
            }
            List<io.netty.channel.ChannelFuture> binds = new ArrayList<>();
            for (ListenerConfig l : config.listeners()) {
                RunningListener rl = l.protocol() == Protocol.BOLT ? bindBolt(l) : bindHttp(l);
                listeners.put(l.name(), rl);
                binds.add(rl.bindFuture);
            }
            if (config.admin().enabled()) {
                admin = bindAdmin();
                binds.add(admin);
            }
            CompletableFuture<?>[] all = binds.stream().map(Gateway::toCompletable).toArray(CompletableFuture[]::new);
            CompletableFuture.allOf(all).whenComplete((v, err) -> {
                if (err != null) {
                    Throwable cause = err.getCause() != null ? err.getCause() : err;
                    shutdown().whenComplete((x, y) -> result.completeExceptionally(cause));
                } else {
                    phase = Phase.RUNNING;
                    log.info("sluice started: transport={} workers={} listeners={}{}", transport.label(), threads,
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
                .withProbes(probes).withListener(events);
        ClusterBalancer balancer = ClusterBalancer.create(c, ctx);
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
        return balancer;
    }

    /** Removes the gauges of a cluster (they hold the balancer). Caller holds the lock. */
    private void removeClusterGauges(String name) {
        List<Meter> meters = clusterMeters.remove(name);
        if (meters != null) {
            meters.forEach(registry::remove);
        }
    }

    /** Binds a data-path listener: accepts on the boss loop, serves on the workers. */
    private io.netty.channel.ChannelFuture listen(ListenerConfig l, ChannelInitializer<SocketChannel> pipeline) {
        return new ServerBootstrap()
                .group(boss, workers)
                .channel(transport.serverChannel())
                .option(ChannelOption.SO_BACKLOG, config.transport().backlog())
                .option(ChannelOption.SO_REUSEADDR, true)
                .childOption(ChannelOption.TCP_NODELAY, true)
                .childOption(ChannelOption.ALLOCATOR, PooledByteBufAllocator.DEFAULT)
                .childHandler(pipeline)
                .bind(l.address(), l.port());
    }

    private RunningListener bindHttp(ListenerConfig l) {
        ListenerMetrics metrics = new ListenerMetrics(registry, l.name(), "http");
        HttpListenerContext ctx = new HttpListenerContext(l.name(), RouteTable.compile(l.routes(), clusters), l.http(),
                metrics, workers, transport, ticker);
        unavailableHooks.add(ctx::closeIdle);
        ctx.accessLog(accessLog);
        return new RunningListener(l, metrics, listen(l, new HttpServerInitializer(ctx, downstream)), ctx::startDraining,
                ctx::closePools, ctx::idleUpstreamConnections, (lc, table) -> ctx.update(table, lc.http()));
    }

    private RunningListener bindBolt(ListenerConfig l) {
        ListenerMetrics metrics = new ListenerMetrics(registry, l.name(), "bolt");
        String dc = l.bolt().defaultCluster();
        BoltListenerContext ctx = new BoltListenerContext(l.name(), RouteTable.compile(l.routes(), clusters), l.bolt(),
                dc == null ? null : clusters.get(dc), metrics, workers, transport, ticker);
        ctx.accessLog(accessLog);
        return new RunningListener(l, metrics, listen(l, new BoltServerInitializer(ctx, downstream)), ctx::startDraining,
                ctx::closePools, ctx::upstreamConnections, (lc, table) -> {
                    String d = lc.bolt().defaultCluster();
                    ctx.update(table, lc.bolt(), d == null ? null : clusters.get(d));
                });
    }

    private io.netty.channel.ChannelFuture bindAdmin() {
        AdminHandler handler = new AdminHandler(registry, this::clusters, () -> phase == Phase.RUNNING, this::config,
                reloadSource == null ? null : () -> reload().summary());
        ServerBootstrap b = new ServerBootstrap()
                .group(boss) // not the workers: the admin API answers even when the data path is saturated
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
        return configVersion.get();
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
     * Applies {@code newConfig} to the running gateway without dropping traffic. Synchronous and
     * non-blocking (it takes the gateway's lock briefly; safe on any thread); reloads are serialized.
     *
     * <p>The config is checked completely before anything changes: the records validate themselves
     * when built, and here the listeners (names, protocols, addresses, ports), the admin listener
     * and the transport must equal the running ones — changing them needs a restart, and such a
     * config is rejected with a {@link ConfigException} naming the JSON path. Everything else applies
     * in place:
     * <ul>
     *   <li>clusters added get a new balancer (probes, events, gauges); removed ones are closed once
     *       the new route tables no longer reference them (requests in flight to them finish) and
     *       their meters are removed; changed ones are {@linkplain ClusterBalancer#update updated}:
     *       kept hosts keep health, ejection state and warm-up clock, added hosts warm up. A cluster
     *       whose protocol changes is replaced by a new balancer.</li>
     *   <li>every listener gets a new route table and options, swapped atomically: the next request
     *       on every connection uses them, requests in flight finish on the old route. HTTP limits
     *       and timeouts and the Bolt frame limit of downstream connections apply to new
     *       connections (and per request where the handler reads them); the Bolt upstream frame
     *       limit stays as started.</li>
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
        try {
            checkReloadable(newConfig);
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
        for (ListenerConfig l : newConfig.listeners()) {
            RunningListener rl = listeners.get(l.name());
            rl.reconfigure.accept(l, tables.get(l.name()));
            if (!rl.config.equals(l)) {
                changedListeners.add(l.name());
            }
            listeners.put(l.name(), rl.withConfig(l));
        }
        // no route references a retired balancer any more; in-flight requests keep their host and finish
        for (ClusterBalancer b : retired) {
            b.close();
        }
        for (String name : removed) {
            removeClusterGauges(name);
            for (Meter m : registry.getMeters()) {
                if (m.getId().getName().startsWith("sluice.cluster.") && name.equals(m.getId().getTag("cluster"))) {
                    registry.remove(m);
                }
            }
        }
        config = newConfig;
        long version = configVersion.incrementAndGet();
        reloadSuccesses.increment();
        ReloadResult result = new ReloadResult(version, added, removed, updated, changedListeners);
        log.info("config reloaded: {}{}", result.summary(),
                old.drainTimeout().equals(newConfig.drainTimeout()) ? "" : "; drain_timeout " + newConfig.drainTimeout());
        return result;
    }

    private void checkRunning() {
        if (phase != Phase.RUNNING) {
            throw new IllegalStateException("cannot reload: the gateway is " + phase.name().toLowerCase(java.util.Locale.ROOT));
        }
    }

    private void rejected(ConfigException e) {
        if (reloadFailures != null) {
            reloadFailures.increment();
        }
        log.warn("config reload rejected, version {} keeps running: {}", configVersion.get(), e.getMessage());
    }

    /** What a reload cannot change: listener binds (and the set of listeners), the admin listener, the transport. */
    private void checkReloadable(GatewayConfig next) {
        GatewayConfig cur = config;
        Map<String, ListenerConfig> running = new LinkedHashMap<>();
        for (ListenerConfig l : cur.listeners()) {
            running.put(l.name(), l);
        }
        String restart = " (changing listeners needs a restart)";
        for (int i = 0; i < next.listeners().size(); i++) {
            ListenerConfig l = next.listeners().get(i);
            String at = "$.listeners[" + i + "]";
            ListenerConfig r = running.remove(l.name());
            if (r == null) {
                throw new ConfigException(at + ".name", l.name(),
                        "one of the running listeners " + listeners.keySet() + " (adding a listener needs a restart)");
            }
            if (r.protocol() != l.protocol()) {
                throw new ConfigException(at + ".protocol", l.protocol().name().toLowerCase(java.util.Locale.ROOT),
                        "the running " + r.protocol().name().toLowerCase(java.util.Locale.ROOT) + restart);
            }
            if (!r.address().equals(l.address())) {
                throw new ConfigException(at + ".address", l.address(), "the running \"" + r.address() + "\"" + restart);
            }
            if (r.port() != l.port()) {
                throw new ConfigException(at + ".port", l.port(), "the running " + r.port() + restart);
            }
        }
        if (!running.isEmpty()) {
            throw new ConfigException("$.listeners", "no listener " + running.keySet(),
                    "every running listener " + listeners.keySet() + " (removing a listener needs a restart)");
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
        return (InetSocketAddress) l.bindFuture.channel().localAddress();
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
        int n = 0;
        for (RunningListener l : listeners.values()) {
            n += l.metrics.activeRequests();
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
        for (RunningListener l : listeners.values()) {
            l.startDraining.run();
            l.bindFuture.channel().close();
        }
        downstream.forEach(ch -> ch.pipeline().fireUserEventTriggered(DrainEvent.INSTANCE));
        long deadline = ticker.nanoTime() + config.drainTimeout().toNanos();
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
            } else if (!timedOut && bolt) {
                // Bolt connections close themselves DRAIN_LINGER after their last answer; closing them
                // sooner would race the bolt client's delivery of that answer
                long real = System.nanoTime();
                if (lingerUntil == 0) {
                    lingerUntil = real + io.sluice.server.bolt.BoltListenerContext.DRAIN_LINGER.toNanos()
                            + TimeUnit.MILLISECONDS.toNanos(20);
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

    private boolean hasBoltListener() {
        for (RunningListener l : listeners.values()) {
            if (l.config().protocol() == Protocol.BOLT) {
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
        downstream.close().addListener(f -> closeResources());
    }

    private void closeResources() {
        try {
            for (RunningListener l : listeners.values()) {
                l.closePools.run();
                l.metrics.close();
            }
            synchronized (this) {
                for (ClusterBalancer c : clusters.values()) {
                    c.close();
                }
                for (List<Meter> ms : clusterMeters.values()) {
                    ms.forEach(registry::remove);
                }
                clusterMeters.clear();
                gatewayMeters.forEach(registry::remove);
            }
            if (accessLog != null) {
                accessLog.close(); // after the listeners: the last requests are written
            }
        } catch (RuntimeException e) {
            log.warn("error while closing; shutting the event loops down anyway", e);
        }
        CompletableFuture<?> b = boss == null ? CompletableFuture.completedFuture(null) : toFuture(boss);
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
                                   io.netty.channel.ChannelFuture bindFuture, Runnable startDraining,
                                   Runnable closePools, IntSupplier upstreamConnections,
                                   BiConsumer<ListenerConfig, RouteTable> reconfigure) {

        RunningListener withConfig(ListenerConfig c) {
            return new RunningListener(c, metrics, bindFuture, startDraining, closePools, upstreamConnections, reconfigure);
        }
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
