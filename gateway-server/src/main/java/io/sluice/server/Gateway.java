package io.sluice.server;

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
import io.sluice.core.config.GatewayConfig;
import io.sluice.core.config.ListenerConfig;
import io.sluice.core.config.Protocol;
import io.sluice.core.time.Ticker;
import io.sluice.lb.ClusterBalancer;
import io.sluice.lb.LbContext;
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
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.IntSupplier;
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
 */
public final class Gateway implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(Gateway.class);

    private enum Phase { NEW, STARTING, RUNNING, DRAINING, CLOSED }

    private final GatewayConfig config;
    private final MeterRegistry registry;
    private final Ticker ticker;
    private final RandomGenerator random;
    private final Transport transport;
    private final Map<String, ClusterBalancer> clusters = new LinkedHashMap<>();
    private final Map<String, RunningListener> listeners = new LinkedHashMap<>();
    private final ChannelGroup downstream = new DefaultChannelGroup("sluice-downstream", GlobalEventExecutor.INSTANCE);
    private volatile Phase phase = Phase.NEW;
    private EventLoopGroup boss;
    private EventLoopGroup workers;
    private CompletableFuture<Void> closeFuture;
    private io.netty.channel.ChannelFuture admin;
    private final List<Meter> clusterMeters = new ArrayList<>();
    /** Run when a host fails its health check or is ejected (written at start, read from event loops). */
    private final List<java.util.function.Consumer<Host>> unavailableHooks = new java.util.concurrent.CopyOnWriteArrayList<>();
    private final ChannelGroup adminChannels = new DefaultChannelGroup("sluice-admin", GlobalEventExecutor.INSTANCE);

    private Gateway(Builder b) {
        this.config = b.config;
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
        NettyHealthProbes probes = new NettyHealthProbes(workers, transport);
        ClusterEvents events = new ClusterEvents(registry, host -> {
            for (java.util.function.Consumer<Host> hook : unavailableHooks) {
                hook.accept(host);
            }
        });
        try {
            for (ClusterConfig c : config.clusters()) {
                LbContext ctx = new LbContext(new EventLoopScheduler(workers.next(), ticker), random)
                        .withProbes(probes).withListener(events);
                ClusterBalancer balancer = ClusterBalancer.create(c, ctx);
                clusters.put(c.name(), balancer);
                clusterMeters.add(Gauge.builder("sluice.cluster.hosts.available", balancer,
                                b -> b.hosts().stream().filter(Host::available).count())
                        .tags("cluster", c.name()).description("Hosts the balancer may pick (healthy, not ejected)")
                        .register(registry));
                clusterMeters.add(Gauge.builder("sluice.cluster.hosts", balancer, b -> b.hosts().size())
                        .tags("cluster", c.name()).description("Hosts configured").register(registry));
                clusterMeters.add(Gauge.builder("sluice.cluster.panic", balancer, b -> b.panicking() ? 1 : 0)
                        .tags("cluster", c.name()).description("1 while the cluster balances over all hosts").register(registry));
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
        return new RunningListener(l, metrics, listen(l, new HttpServerInitializer(ctx, downstream)), ctx::startDraining, ctx::closePools,
                ctx::idleUpstreamConnections);
    }

    private RunningListener bindBolt(ListenerConfig l) {
        ListenerMetrics metrics = new ListenerMetrics(registry, l.name(), "bolt");
        String dc = l.bolt().defaultCluster();
        BoltListenerContext ctx = new BoltListenerContext(l.name(), RouteTable.compile(l.routes(), clusters), l.bolt(),
                dc == null ? null : clusters.get(dc), metrics, workers, transport, ticker);
        return new RunningListener(l, metrics, listen(l, new BoltServerInitializer(ctx, downstream)), ctx::startDraining, ctx::closePools,
                ctx::upstreamConnections);
    }

    private io.netty.channel.ChannelFuture bindAdmin() {
        AdminHandler handler = new AdminHandler(registry, this::clusters, () -> phase == Phase.RUNNING);
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
            awaitDrained(deadline);
        }
        return closeFuture;
    }

    private void awaitDrained(long deadline) {
        if (activeRequests() == 0 || ticker.nanoTime() - deadline >= 0 || workers.isShuttingDown()) {
            if (activeRequests() > 0) {
                log.warn("drain timeout: closing {} request(s) still in flight", activeRequests());
            }
            finishClose();
            return;
        }
        GlobalEventExecutor.INSTANCE.schedule(() -> awaitDrained(deadline), 10, TimeUnit.MILLISECONDS);
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
            for (ClusterBalancer c : clusters.values()) {
                c.close();
            }
            for (Meter m : clusterMeters) {
                registry.remove(m);
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

    private record RunningListener(ListenerConfig config, ListenerMetrics metrics,
                                   io.netty.channel.ChannelFuture bindFuture, Runnable startDraining,
                                   Runnable closePools, IntSupplier upstreamConnections) {
    }

    /** Builds a {@link Gateway}. Only {@link #config} is required. */
    public static final class Builder {
        private GatewayConfig config;
        private MeterRegistry registry;
        private Ticker ticker = Ticker.system();
        private RandomGenerator random = new SplittableRandom();

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

        public Gateway build() {
            Objects.requireNonNull(config, "config");
            return new Gateway(this);
        }
    }
}
