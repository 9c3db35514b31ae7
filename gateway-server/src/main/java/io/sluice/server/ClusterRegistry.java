package io.sluice.server;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.netty.channel.EventLoopGroup;
import io.sluice.core.cluster.Host;
import io.sluice.core.config.ClusterConfig;
import io.sluice.core.time.Ticker;
import io.sluice.lb.ClusterBalancer;
import io.sluice.server.policy.PolicyMeters;
import io.sluice.lb.HealthCheckHub;
import io.sluice.lb.HealthProbe;
import io.sluice.lb.LbContext;
import io.sluice.core.discovery.HostSource;
import io.sluice.core.config.DiscoveryConfig;
import io.netty.channel.EventLoop;
import io.sluice.server.discovery.DiscoveryHub;
import io.sluice.server.discovery.DnsHostSource;
import io.sluice.server.discovery.RegistryRouter;
import io.sluice.server.health.NettyHealthProbes;
import io.sluice.server.metrics.ClusterEvents;
import io.sluice.server.metrics.ClusterMetrics;
import io.sluice.server.metrics.GatewayMetrics;
import io.sluice.server.metrics.HostGauges;
import io.sluice.server.tls.upstream.UpstreamTlsContexts;
import io.sluice.server.transport.EventLoopScheduler;
import io.sluice.server.transport.Transport;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.function.Supplier;
import java.util.random.RandomGenerator;

/**
 * The running clusters: one {@link ClusterBalancer} per cluster, wired to the health probes, the
 * shared health-check loops, the state-change events and the cluster meters. Readers on any thread
 * see the current clusters as one immutable map ({@link #current()}), replaced as a whole when
 * {@link #update} publishes a new set. This is the seam through which host sources other than the
 * config file (service discovery) will change clusters.
 *
 * <p>Not thread-safe for writers: {@link #start}, {@link #update}, {@link Update#finish} and
 * {@link #close} are called under the owner's lock.
 */
final class ClusterRegistry {

    private final MeterRegistry registry;
    private final GatewayMetrics metrics;
    private final EventLoopGroup workers;
    private final Ticker ticker;
    private final RandomGenerator random;
    private final NettyHealthProbes probes;
    /** Upstream TLS contexts of the clusters that have a tls block (built on start and update). */
    private final UpstreamTlsContexts upstreamTls;
    /** Probing loops shared by all clusters: an address listed by several clusters with the same check is probed once. */
    private final HealthCheckHub healthChecks = new HealthCheckHub();
    private final HostGauges hostGauges;
    private final ClusterEvents events;
    private final Map<String, List<Meter>> clusterMeters = new HashMap<>();
    /** Replaced as a whole (copy on write); readers on any thread see a consistent map. */
    private volatile Map<String, ClusterBalancer> clusters = Map.of();
    /** Clusters with {@code discovery}: their host sources (docs/discovery.md). */
    private DiscoveryHub discovery;
    private Map<String, Supplier<HostSource>> customSources = Map.of();
    private final Transport transport;
    /** Route-by-registry templates by cluster name. */
    private final Map<String, RegistryRouter> routers = new java.util.concurrent.ConcurrentHashMap<>();
    /** The idle sweep of each router. */
    private final Map<String, java.util.concurrent.ScheduledFuture<?>> routerSweeps = new java.util.concurrent.ConcurrentHashMap<>();
    /** Builds and retires routed clusters; created with the first template. Guarded by this. */
    private java.util.concurrent.ScheduledExecutorService routerExecutor;

    /**
     * @param hostUnavailable run when a host fails its health check or is ejected (from an event loop)
     */
    ClusterRegistry(MeterRegistry registry, GatewayMetrics metrics, EventLoopGroup workers, Transport transport,
                    Ticker ticker, RandomGenerator random, Consumer<Host> hostUnavailable) {
        this.registry = registry;
        this.metrics = metrics;
        this.workers = workers;
        this.ticker = ticker;
        this.random = random;
        this.upstreamTls = new UpstreamTlsContexts(registry);
        this.probes = new NettyHealthProbes(workers, transport, upstreamTls);
        this.hostGauges = new HostGauges(registry);
        this.events = new ClusterEvents(registry, hostUnavailable);
        this.transport = transport;
    }

    /** Registers embedders' host sources ({@code discovery.type = custom}); call before {@link #start}. */
    void hostSources(Map<String, Supplier<HostSource>> sources) {
        this.customSources = Map.copyOf(sources);
    }

    /** Removes every meter of a cluster that is gone. Caller holds this. */
    private void removeClusterMeters(String name) {
        removeClusterGauges(name);
        metrics.removeCluster(name);
        for (Meter m : registry.getMeters()) {
            String n = m.getId().getName();
            if ((n.startsWith("sluice.cluster.") || n.startsWith("sluice.upstream.")
                    || n.startsWith("sluice.health_check.")) && name.equals(m.getId().getTag("cluster"))) {
                registry.remove(m);
            }
        }
    }

    /**
     * Route by registry: makes a template cluster ({@code discovery.service "*"}) resolve the cluster of
     * each Bolt service on first use; those clusters are built, followed and retired on a daemon thread.
     * Replaces the router a previous config of the same cluster had.
     */
    private void syncRouter(ClusterBalancer b) {
        RegistryRouter old = routers.remove(b.name());
        if (old != null) {
            old.close();
        }
        java.util.concurrent.ScheduledFuture<?> sweep = routerSweeps.remove(b.name());
        if (sweep != null) {
            sweep.cancel(false);
        }
        DiscoveryConfig dc = b.config().discovery();
        if (dc == null || !dc.routesByService()) {
            return;
        }
        if (routerExecutor == null) {
            routerExecutor = java.util.concurrent.Executors.newSingleThreadScheduledExecutor(r -> {
                Thread t = new Thread(r, "sluice-registry-routes");
                t.setDaemon(true);
                return t;
            });
        }
        java.util.concurrent.ScheduledExecutorService ex = routerExecutor;
        RegistryRouter router = new RegistryRouter(b.config(), this::buildChild, this::retireChild, ex, ticker);
        routers.put(b.name(), router);
        b.children(router::child);
        long period = Math.max(1000, Math.min(30_000, dc.idleTimeout().toMillis() / 4));
        routerSweeps.put(b.name(), ex.scheduleWithFixedDelay(() -> {
            try {
                router.expireIdle();
            } catch (RuntimeException e) {
                // one failing sweep must not cancel the next ones
            }
        }, period, period, java.util.concurrent.TimeUnit.MILLISECONDS));
    }

    private ClusterBalancer buildChild(ClusterConfig c) {
        ClusterBalancer b;
        synchronized (this) {
            b = newBalancer(c);
        }
        discovery().sync(b);
        return b;
    }

    private void retireChild(ClusterBalancer b) {
        discovery().detach(b.name());
        synchronized (this) {
            b.close();
            removeClusterMeters(b.name());
        }
    }

    /** The services a route-by-registry cluster has discovered (empty for others). */
    java.util.Set<String> routedServices(String cluster) {
        RegistryRouter r = routers.get(cluster);
        return r == null ? java.util.Set.of() : r.services();
    }

    /**
     * discovery: the running clusters plus, after each route-by-registry template, the per-service clusters it
     * discovered ({@code template/key}) — what the admin API lists.
     */
    Map<String, ClusterBalancer> withRouted() {
        Map<String, ClusterBalancer> now = clusters;
        if (routers.isEmpty()) {
            return now;
        }
        Map<String, ClusterBalancer> m = new java.util.LinkedHashMap<>();
        for (Map.Entry<String, ClusterBalancer> e : now.entrySet()) {
            m.put(e.getKey(), e.getValue());
            RegistryRouter r = routers.get(e.getKey());
            if (r != null) {
                m.putAll(r.clusters());
            }
        }
        return m;
    }

    /** discovery: the admin view of a cluster's source; for a route-by-registry template, its discovered services. */
    Map<String, Object> discoveryStatus(String cluster) {
        RegistryRouter r = routers.get(cluster);
        if (r == null) {
            return discovery().status(cluster);
        }
        ClusterBalancer t = clusters.get(cluster);
        Map<String, Object> m = new java.util.LinkedHashMap<>();
        m.put("type", t == null ? "zookeeper" : t.config().discovery().type());
        m.put("service", "*");
        m.put("routed_clusters", new ArrayList<>(r.clusters().keySet()));
        m.put("max_services", t == null ? 0 : t.config().discovery().maxServices());
        return m;
    }

    /** A DNS cluster's source: queries and timers on one of the workers. */
    private HostSource dnsSource(DiscoveryConfig config) {
        EventLoop loop = workers.next();
        return new DnsHostSource(config, loop, DnsHostSource.datagramChannel(transport), new EventLoopScheduler(loop, ticker));
    }

    /** The discovery sources (admin status); built on first use. */
    synchronized DiscoveryHub discovery() {
        if (discovery == null) {
            discovery = new DiscoveryHub(registry, customSources, System::currentTimeMillis, hostGauges::sync, this::dnsSource)
                    .clock(ticker::nanoTime);
        }
        return discovery;
    }

    /** discovery: the clusters whose first host list /ready still waits for, or null. */
    synchronized String discoveryWaitingFor() {
        return discovery == null ? null : discovery.waitingFor();
    }

    /** discovery: a note for /ready about clusters ready by initial_fetch_timeout without a list, or null. */
    synchronized String discoveryReadyNote() {
        return discovery == null ? null : discovery.readyWithoutList();
    }

    /** The running clusters by name (an immutable snapshot). */
    Map<String, ClusterBalancer> current() {
        return clusters;
    }

    /** The upstream TLS contexts by cluster (the pools read them at connect). */
    UpstreamTlsContexts upstreamTls() {
        return upstreamTls;
    }

    /** The balancer of a cluster, or null. */
    ClusterBalancer get(String name) {
        return clusters.get(name);
    }

    /**
     * Builds the first clusters. The map is published while it fills, so that {@link #close} after a
     * failed start closes whatever was built.
     */
    synchronized Map<String, ClusterBalancer> start(List<ClusterConfig> configs) {
        upstreamTls.apply(configs); // upstream TLS: contexts built before any connection needs them
        Map<String, ClusterBalancer> built = new LinkedHashMap<>();
        clusters = built;
        for (ClusterConfig c : configs) {
            if (c.discovery() != null) {
                discovery().check(c.name(), c.discovery());
            }
        }
        for (ClusterConfig c : configs) {
            built.put(c.name(), newBalancer(c));
        }
        for (ClusterBalancer b : built.values()) {
            discovery().sync(b);
            syncRouter(b);
        }
        return built;
    }

    /**
     * Applies {@code next}: clusters added get a new balancer, changed ones are
     * {@linkplain ClusterBalancer#update updated} in place (kept hosts keep health, ejection state and
     * warm-up clock), a cluster whose protocol changes is replaced; the new map is published at once.
     * Balancers of removed or replaced clusters keep running until {@link Update#finish} (requests in
     * flight to them finish; the route tables still in use may reference them).
     */
    synchronized Update update(List<ClusterConfig> next) {
        upstreamTls.apply(next); // upstream TLS: changed blocks rebuilt, unchanged ones kept (open connections untouched)
        Map<String, ClusterBalancer> running = clusters;
        Map<String, ClusterBalancer> built = new LinkedHashMap<>();
        List<String> added = new ArrayList<>();
        List<String> updated = new ArrayList<>();
        List<ClusterBalancer> retired = new ArrayList<>();
        for (ClusterConfig c : next) {
            if (c.discovery() != null) {
                discovery().check(c.name(), c.discovery());
            }
        }
        for (ClusterConfig c : next) {
            ClusterBalancer b = running.get(c.name());
            if (b == null) {
                built.put(c.name(), newBalancer(c));
                added.add(c.name());
            } else if (b.config().equals(c)) {
                built.put(c.name(), b);
            } else if (b.config().protocol() != c.protocol()) {
                retired.add(b);
                removeClusterGauges(c.name());
                built.put(c.name(), newBalancer(c));
                updated.add(c.name());
            } else {
                b.update(c);
                hostGauges.sync(b);
                built.put(c.name(), b);
                updated.add(c.name());
            }
        }
        List<String> removed = new ArrayList<>();
        for (ClusterBalancer b : running.values()) {
            if (!built.containsKey(b.name())) {
                retired.add(b);
                removed.add(b.name());
            }
        }
        for (String name : removed) {
            discovery().detach(name);
            RegistryRouter r = routers.remove(name);
            if (r != null) {
                r.close();
            }
            java.util.concurrent.ScheduledFuture<?> sweep = routerSweeps.remove(name);
            if (sweep != null) {
                sweep.cancel(false);
            }
        }
        for (ClusterBalancer b : built.values()) {
            discovery().sync(b);
            RegistryRouter r = routers.get(b.name());
            boolean wants = b.config().discovery() != null && b.config().discovery().routesByService();
            if (wants != (r != null) || (r != null && !running.containsValue(b)) || updated.contains(b.name())) {
                syncRouter(b);
            }
        }
        Map<String, ClusterBalancer> published = Collections.unmodifiableMap(built);
        clusters = published;
        return new Update(published, added, updated, removed, retired);
    }

    /**
     * What {@link #update} changed.
     *
     * @param clusters the clusters now published
     * @param retired  balancers no longer published, still open until {@link #finish}
     */
    final class Update {
        final Map<String, ClusterBalancer> clusters;
        final List<String> added;
        final List<String> updated;
        final List<String> removed;
        private final List<ClusterBalancer> retired;

        private Update(Map<String, ClusterBalancer> clusters, List<String> added, List<String> updated,
                       List<String> removed, List<ClusterBalancer> retired) {
            this.clusters = clusters;
            this.added = added;
            this.updated = updated;
            this.removed = removed;
            this.retired = retired;
        }

        /**
         * Closes the retired balancers and deletes the meters of removed clusters. Call once no route
         * table references them any more (in-flight requests keep their host and finish).
         */
        void finish() {
            synchronized (ClusterRegistry.this) {
                for (ClusterBalancer b : retired) {
                    b.close();
                }
                for (String name : removed) {
                    removeClusterMeters(name);
                }
            }
        }
    }

    /** Closes every balancer (and its health checks) and removes the cluster gauges. */
    void close() {
        for (RegistryRouter r : routers.values()) {
            r.close();
        }
        routers.clear();
        synchronized (this) {
            if (routerExecutor != null) {
                routerExecutor.shutdownNow();
            }
        }
        discovery().close();
        for (ClusterBalancer c : clusters.values()) {
            c.close();
        }
        for (List<Meter> ms : clusterMeters.values()) {
            ms.forEach(registry::remove);
        }
        clusterMeters.clear();
    }

    /** A balancer wired like every other (probes, state-change events, gauges). */
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
        meters.addAll(PolicyMeters.register(registry, balancer)); // resilience: breakers and retries
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

    /** Removes the gauges of a cluster (they hold the balancer). */
    private void removeClusterGauges(String name) {
        List<Meter> meters = clusterMeters.remove(name);
        if (meters != null) {
            meters.forEach(registry::remove);
        }
        hostGauges.remove(name);
    }
}
