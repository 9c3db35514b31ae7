package io.sluice.server;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.config.MeterFilter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.netty.channel.EventLoopGroup;
import io.sluice.core.config.ConfigException;
import io.sluice.core.config.GatewayConfig;
import io.sluice.core.discovery.HostSource;
import io.sluice.core.time.Ticker;
import io.sluice.lb.ClusterBalancer;
import io.sluice.server.accesslog.AccessLog;
import io.sluice.server.admin.AdminHandler;
import io.sluice.server.tls.TlsAdmin;
import io.sluice.server.admin.AdminServer;
import io.sluice.server.metrics.GatewayMetrics;
import io.sluice.server.policy.ratelimit.RateLimiter;
import io.sluice.server.transport.Sockets;
import io.sluice.server.transport.Transport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
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
 *
 * <p>The parts: {@link ClusterRegistry} (balancers, their meters and health probes),
 * {@link Listeners} (sockets, protocol variants, retirement and drain), {@link AdminServer}, and
 * {@link Reloader} (the reload sequence and the running config); this class owns the event loops,
 * composes the parts, orders start and shutdown, and serializes reloads with them.
 */
public final class Gateway implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(Gateway.class);

    private enum Phase { NEW, STARTING, RUNNING, DRAINING, CLOSED }

    /** The config given to the builder; the running one is {@link #reloader}'s once started. */
    private final GatewayConfig initialConfig;
    private final Supplier<GatewayConfig> reloadSource;
    /** Embedders' host sources by name (clusters with {@code discovery.type = custom}). */
    private final Map<String, Supplier<HostSource>> hostSources;
    private final MeterRegistry registry;
    /** True when the registry is the gateway's own (JVM binders go only there). */
    private final boolean ownRegistry;
    private final Ticker ticker;
    private final RandomGenerator random;
    private final Transport transport;
    /** One listening socket per worker (SO_REUSEPORT). */
    private final boolean reusePort;
    private volatile Phase phase = Phase.NEW;
    /** Serves the admin API only (the listeners accept on the workers). */
    private EventLoopGroup adminLoop;
    private EventLoopGroup workers;
    private CompletableFuture<Void> closeFuture;
    private GatewayMetrics metrics;
    private AccessLog accessLog;
    private volatile ClusterRegistry clusters;
    private volatile Listeners listeners;
    private volatile AdminServer admin;
    private volatile Reloader reloader;
    /** Ticker time when the gateway started serving; 0 before. */
    private volatile long startedNanos;
    // warm-up: run before any listener binds (io.sluice.server.warmup); disabled unless the builder asks
    private final io.sluice.server.warmup.WarmUpConfig warmUp;
    private final io.sluice.server.warmup.WarmUp.Observer warmUpObserver;
    private volatile io.sluice.server.warmup.WarmUp.Result warmUpResult;
    /** warm-up: false for the warm-up's private gateway (no "sluice started/stopped" lines). */
    private final boolean logLifecycle;

    private Gateway(Builder b) {
        this.initialConfig = b.config;
        this.reloadSource = b.reloadSource;
        this.hostSources = Map.copyOf(b.hostSources);
        GatewayConfig config = b.config;
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
        this.random = b.random;
        this.warmUp = b.warmUp; // warm-up
        this.warmUpObserver = b.warmUpObserver;
        this.logLifecycle = b.logLifecycle;
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
        GatewayConfig config = initialConfig;
        int threads = Transport.workerThreads(config.transport());
        adminLoop = transport.newGroup(1, "sluice-admin");
        workers = transport.newGroup(threads, "sluice-worker");
        CompletableFuture<Gateway> result = new CompletableFuture<>();
        accessLog = AccessLog.open(config.accessLog(), registry);
        metrics = new GatewayMetrics(registry, config.admin().metrics(), ownRegistry && config.admin().metrics());
        Listeners[] ls = new Listeners[1]; // the registry's host events reach the listeners built next
        clusters = new ClusterRegistry(registry, metrics, workers, transport, ticker, random, host -> ls[0].hostUnavailable(host));
        clusters.hostSources(hostSources);
        listeners = ls[0] = new Listeners(registry, metrics, workers, transport, config.transport(), reusePort, ticker,
                accessLog, clusters, () -> phase == Phase.RUNNING);
        reloader = new Reloader(config, clusters, listeners, metrics);
        // warm-up: synthetic traffic through a private gateway first; then bind (nothing accepts, /ready is not 200, before)
        if (warmUp.enabled()) {
            Thread t = new Thread(() -> {
                warmUpResult = io.sluice.server.warmup.WarmUp.run(config, warmUp, ticker, warmUpObserver);
                bind(config, threads, result);
            }, "sluice-warm-up");
            t.setDaemon(true);
            t.start();
            return result;
        }
        bind(config, threads, result);
        return result;
    }

    private synchronized void bind(GatewayConfig config, int threads, CompletableFuture<Gateway> result) {
        if (phase != Phase.STARTING) { // warm-up: shut down while warming up
            result.completeExceptionally(new IllegalStateException("gateway shut down while starting"));
            return;
        }
        try {
            listeners.rateLimiter = RateLimiter.create(registry, workers, transport, ticker); // docs/rate-limits.md
            listeners.rateLimiter.update(config.rateLimit());
            Map<String, ClusterBalancer> built = clusters.start(config.clusters());
            List<CompletableFuture<?>> binds = new ArrayList<>(listeners.start(config.listeners(), built));
            if (config.admin().enabled()) {
                admin = new AdminServer(config.admin(), adminHandler());
                binds.add(admin.bind(adminLoop, transport.serverChannel()));
            }
            CompletableFuture.allOf(binds.toArray(CompletableFuture[]::new)).whenComplete((v, err) -> {
                if (err != null) {
                    Throwable cause = err.getCause() != null ? err.getCause() : err;
                    shutdown().whenComplete((x, y) -> result.completeExceptionally(cause));
                } else {
                    phase = Phase.RUNNING;
                    startedNanos = ticker.nanoTime();
                    if (logLifecycle) {
                        log.info("sluice started: transport={} workers={}{} listeners={}{}", transport.label(), threads,
                                reusePort ? " reuse_port" : "",
                                listeners.names(), admin == null ? "" : " admin=" + Sockets.format(adminAddress()));
                    }
                    result.complete(this);
                }
            });
        } catch (RuntimeException e) {
            shutdown().whenComplete((x, y) -> result.completeExceptionally(e));
        }
    }

    /** What the warm-up did, or null when none ran (yet). */
    public io.sluice.server.warmup.WarmUp.Result warmUpResult() {
        return warmUpResult;
    }

    private AdminHandler adminHandler() {
        // discovery: the admin API also lists route-by-registry clusters (template/service)
        return new AdminHandler(registry, this::adminClusters, () -> phase == Phase.RUNNING, this::config,
                reloadSource == null ? null : () -> reload().summary(), AdminHandler.Status.of(() -> listeners.info(),
                        reloader::lastReload, this::configVersion, () -> startedNanos == 0 ? 0
                                : TimeUnit.NANOSECONDS.toMillis(ticker.nanoTime() - startedNanos),
                        () -> config().admin().metrics()))
                .withDiscovery(name -> clusters.discoveryStatus(name))
                .withDiscoveryReadiness(clusters::discoveryWaitingFor, clusters::discoveryReadyNote) // discovery
                .certs(() -> TlsAdmin.json(listeners.tls()), () -> TlsAdmin.html(listeners.tls())); // TLS hook
    }

    /** The bound address of the admin API, or null when it is disabled. */
    public InetSocketAddress adminAddress() {
        AdminServer a = admin;
        return a == null ? null : a.address();
    }

    /** The running configuration. */
    public GatewayConfig config() {
        Reloader r = reloader;
        return r == null ? initialConfig : r.config();
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
        return reload(null, null);
    }

    /**
     * {@link #reload()} whose log lines name what asked for it, so that a CLI prints one line per
     * reload: {@code SIGHUP: reloaded FILE: config version 2: ...} or {@code SIGHUP: invalid config
     * FILE, the running config stays (version 1): $.clusters[0]...}.
     *
     * @param trigger {@code SIGHUP}, {@code config file changed}; null: the plain lines
     * @param source  what was read, e.g. the file name
     */
    ReloadResult reload(String trigger, String source) {
        if (reloadSource == null) {
            throw new IllegalStateException("this gateway has no reload source: it was configured in code"
                    + " (embedded, or the jar's demo mode without -c); call Gateway.reload(GatewayConfig)");
        }
        checkRunning();
        GatewayConfig next;
        try {
            next = reloadSource.get();
        } catch (ConfigException e) {
            reloader.rejected(e, trigger, source);
            throw e;
        }
        return apply(next, trigger, source);
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
    public ReloadResult reload(GatewayConfig newConfig) {
        return apply(newConfig, null, null);
    }

    private synchronized ReloadResult apply(GatewayConfig newConfig, String trigger, String source) {
        checkRunning();
        return reloader.apply(newConfig, trigger, source);
    }

    private void checkRunning() {
        if (phase != Phase.RUNNING) {
            throw new IllegalStateException("cannot reload: the gateway is " + phase.name().toLowerCase(Locale.ROOT));
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
        Listeners ls = listeners;
        if (ls == null) {
            throw new NullPointerException("no listener " + listener);
        }
        return ls.address(listener);
    }

    public int port(String listener) {
        return address(listener).getPort();
    }

    /** The balancer of a cluster (hosts, health, picks), or null. */
    public ClusterBalancer cluster(String name) {
        ClusterRegistry c = clusters;
        return c == null ? null : c.get(name);
    }

    public Map<String, ClusterBalancer> clusters() {
        ClusterRegistry c = clusters;
        return c == null ? Map.of() : Collections.unmodifiableMap(c.current());
    }

    /** discovery: {@link #clusters()} plus route-by-registry per-service clusters, for the admin API. */
    private Map<String, ClusterBalancer> adminClusters() {
        ClusterRegistry c = clusters;
        return c == null ? Map.of() : Collections.unmodifiableMap(c.withRouted());
    }

    /** Requests in flight on all listeners. */
    public int activeRequests() {
        Listeners ls = listeners;
        return ls == null ? 0 : ls.activeRequests();
    }

    /**
     * Upstream connections of a listener (approximate; for tests and the admin API): HTTP, the
     * parked keep-alive ones; Bolt, the open multiplexed ones.
     */
    public int idleUpstreamConnections(String listener) {
        return listeners.upstreamConnections(listener);
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
        if (workers == null) {
            closeResources();
        } else {
            listeners.drain(config().drainTimeout()).whenComplete((v, e) -> finishClose());
        }
        return closeFuture;
    }

    private void finishClose() {
        // never block here: this may run on the GlobalEventExecutor, which also completes the group future
        AdminServer a = admin;
        if (a != null) {
            a.close();
        }
        listeners.closeAll().whenComplete((v, e) -> closeResources());
    }

    private void closeResources() {
        try {
            if (listeners != null) {
                listeners.closeResources();
            }
            synchronized (this) {
                if (listeners != null && listeners.rateLimiter != null) {
                    listeners.rateLimiter.close();
                }
                if (clusters != null) {
                    clusters.close();
                }
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
            if (startedNanos != 0 && logLifecycle) { // a start that failed is reported by whoever started it
                log.info("sluice stopped");
            }
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

    /** Builds a {@link Gateway}. Only {@link #config} is required. */
    public static final class Builder {
        private GatewayConfig config;
        private MeterRegistry registry;
        private Ticker ticker = Ticker.system();
        private RandomGenerator random = new SplittableRandom();
        private Supplier<GatewayConfig> reloadSource;
        private final Map<String, Supplier<HostSource>> hostSources = new LinkedHashMap<>();
        private io.sluice.server.warmup.WarmUpConfig warmUp = io.sluice.server.warmup.WarmUpConfig.disabled();
        private io.sluice.server.warmup.WarmUp.Observer warmUpObserver;
        private boolean logLifecycle = true;

        private Builder() {
        }

        /** warm-up: false leaves out the "sluice started" / "sluice stopped" log lines (the warm-up's private gateway). */
        public Builder logLifecycle(boolean on) {
            this.logLifecycle = on;
            return this;
        }

        /**
         * warm-up: before the listeners bind, drive the hot paths with synthetic traffic through a private
         * gateway and loopback backends (never the configured upstreams) for up to {@code warmUp.duration()}
         * on the ticker; {@link #start()} completes after it. Default: none. docs/operations.md#warm-up.
         */
        public Builder warmUp(io.sluice.server.warmup.WarmUpConfig warmUp) {
            this.warmUp = Objects.requireNonNull(warmUp);
            return this;
        }

        /** warm-up: called on the warm-up thread after each round (tests). */
        Builder warmUpObserver(io.sluice.server.warmup.WarmUp.Observer observer) {
            this.warmUpObserver = observer;
            return this;
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

        /**
         * Registers a source of hosts for clusters that name it: {@code "discovery": {"type": "custom",
         * "source": "<name>"}} (or {@code DiscoveryConfig.custom(name)}). The factory is called once per
         * cluster that uses it, when the cluster starts; the gateway closes the source when the cluster
         * goes or the gateway stops. docs/embedding.md.
         */
        public Builder hostSource(String name, Supplier<HostSource> factory) {
            hostSources.put(Objects.requireNonNull(name, "name"), Objects.requireNonNull(factory, "factory"));
            return this;
        }

        public Gateway build() {
            Objects.requireNonNull(config, "config");
            return new Gateway(this);
        }
    }
}
