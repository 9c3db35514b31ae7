package io.sluice.server.discovery;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.sluice.core.cluster.Host;
import io.sluice.core.config.ConfigException;
import io.sluice.core.config.DiscoveryConfig;
import io.sluice.core.discovery.DiscoveredHost;
import io.sluice.core.discovery.HostSource;
import io.sluice.lb.ClusterBalancer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * Connects clusters that declare {@code discovery} to their {@link HostSource}: starts one source per
 * cluster, applies every list it publishes to the cluster's balancer
 * ({@link ClusterBalancer#applyDiscovered}), and owns the failure semantics every source shares:
 * while the source is not connected nothing changes (the last hosts keep serving); an empty list while
 * connected is ignored unless {@code allow_empty} (the last non-empty set stays, flagged). Each state
 * change and each applied change is one log line and a metric:
 * {@code sluice.discovery.hosts}, {@code .connected}, {@code .empty_protected}, {@code .hosts_digest}
 * (gauges), {@code sluice.discovery.updates{result}}, {@code .state_changes{state}},
 * {@code .parse_failures} (counters), all tagged {@code cluster}.
 *
 * <p>Thread-safe: sources publish on their own threads; attach/detach run under the gateway's lock.
 */
public final class DiscoveryHub implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(DiscoveryHub.class);

    private final MeterRegistry registry;
    private final Map<String, Supplier<HostSource>> customSources;
    private final LongSupplier wallMillis;
    private final Consumer<ClusterBalancer> applied;
    private final Function<DiscoveryConfig, HostSource> dnsSources;
    /**
     * One ZooKeeper session per registry address, shared by the clusters that follow services there.
     * Created with the first ZooKeeper source: Curator is an optional dependency, and a gateway
     * without ZooKeeper clusters must never load its classes. Guarded by this.
     */
    private ZooKeeperClients zooKeeper;
    private NacosPollers nacos;
    private final Meter sessionsGauge;
    /** cluster name -> its running source. Guarded by this. */
    private final Map<String, Attached> attached = new HashMap<>();
    /** The monotonic clock of {@code initial_fetch_timeout}. */
    private volatile LongSupplier nanos = System::nanoTime;
    /** True once every source attached so far gave its first list (or timed out): /ready stops waiting for good. Guarded by this. */
    private boolean initialSyncDone;

    /**
     * @param customSources embedders' sources by name ({@code discovery.type = custom, source = name})
     * @param wallMillis    the wall clock that providers' start times are compared with
     * @param applied       run after a cluster's host set changed (host meters follow it)
     * @param dnsSources    builds the source of a {@code dns} cluster (on the gateway's event loops)
     */
    public DiscoveryHub(MeterRegistry registry, Map<String, Supplier<HostSource>> customSources, LongSupplier wallMillis,
                        Consumer<ClusterBalancer> applied, Function<DiscoveryConfig, HostSource> dnsSources) {
        this.dnsSources = dnsSources;
        this.registry = registry;
        this.customSources = Map.copyOf(customSources);
        this.wallMillis = wallMillis;
        this.applied = applied;
        this.sessionsGauge = Gauge.builder("sluice.discovery.zookeeper.sessions", this, DiscoveryHub::zooKeeperSessions)
                .description("ZooKeeper sessions the gateway holds: one per registry address in use, shared by its clusters")
                .register(registry);
    }

    /** Checks that {@code config} can be started here (library present, custom source registered). */
    public void check(String cluster, DiscoveryConfig config) {
        String path = "clusters[" + cluster + "].discovery";
        if (DiscoveryConfig.ZOOKEEPER.equals(config.type())) {
            try {
                Class.forName("org.apache.curator.framework.recipes.cache.CuratorCache", false,
                        DiscoveryHub.class.getClassLoader());
            } catch (ClassNotFoundException e) {
                throw new ConfigException(path + ".type", config.type(),
                        "a source whose library is on the classpath (add org.apache.curator:curator-recipes 5.9.0"
                                + " and org.apache.zookeeper:zookeeper 3.9.5; the standalone jar has them)");
            }
            if (config.routesByService()) {
                return;
            }
            try {
                SofaService.parse(config.service());
            } catch (IllegalArgumentException e) {
                throw new ConfigException(path + ".service", config.service(), "interface:version[:uniqueId]");
            }
        } else if (DiscoveryConfig.NACOS.equals(config.type())) { // nacos discovery: HTTP open API, no library needed
            if (config.routesByService() || config.nacos() != null && config.nacos().serviceName() != null) {
                return;
            }
            try {
                SofaService.parse(config.service());
            } catch (IllegalArgumentException e) {
                throw new ConfigException(path + ".service", config.service(), "interface:version[:uniqueId]");
            }
        } else if (DiscoveryConfig.DNS.equals(config.type())) {
            return;
        } else if (!customSources.containsKey(config.source())) {
            throw new ConfigException(path + ".source", config.source(),
                    "the name of a source registered with Gateway.builder().hostSource(name, ...); registered: "
                            + customSources.keySet());
        }
    }

    /**
     * Makes {@code balancer} follow its discovery source: starts one if the cluster has none or its
     * discovery config changed, points the running one at this balancer otherwise. A cluster without
     * {@code discovery} loses its source.
     */
    public synchronized void sync(ClusterBalancer balancer) {
        String name = balancer.name();
        DiscoveryConfig dc = balancer.config().discovery();
        Attached a = attached.get(name);
        if (a != null && (dc == null || !dc.equals(a.config))) {
            detach(name);
            a = null;
        }
        if (dc == null || dc.routesByService()) {
            return; // a route-by-registry template has no source of its own: its per-service clusters do
        }
        if (a != null) {
            if (a.balancer != balancer) {
                a.balancer = balancer; // the cluster was replaced (protocol change): feed the new one
                List<DiscoveredHost> last = a.last;
                if (last != null) {
                    balancer.applyDiscovered(last, wallMillis.getAsLong());
                    applied.accept(balancer);
                }
            }
            return;
        }
        check(name, dc);
        Attached fresh = new Attached(name, dc, balancer);
        attached.put(name, fresh);
        fresh.start();
    }

    /** Stops the source of a cluster that was removed. */
    public synchronized void detach(String cluster) {
        Attached a = attached.remove(cluster);
        if (a != null) {
            a.stop();
        }
    }

    /** Admin view of a cluster's source (null if it has none). */
    public synchronized Map<String, Object> status(String cluster) {
        Attached a = attached.get(cluster);
        if (a == null) {
            return null;
        }
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("type", a.config.type());
        m.put("source", a.label);
        m.put("state", a.state);
        m.put("connected", a.connected);
        m.put("stale", !a.connected);
        m.put("empty_protected", a.emptyProtected);
        m.put("hosts_digest", Long.toHexString(a.digest));
        m.put("last_update_ms", a.lastUpdateMillis);
        m.put("wall_now_ms", wallMillis.getAsLong());
        return m;
    }

    /** The monotonic clock {@code initial_fetch_timeout} is measured on (the gateway's ticker; tests: a fake one). */
    public DiscoveryHub clock(LongSupplier nanoTime) {
        this.nanos = nanoTime;
        return this;
    }

    /**
     * Readiness at start: null when every cluster with a source has applied its first host list or
     * waited {@code initial_fetch_timeout} for it, else which clusters {@code /ready} still waits for.
     * Once null it stays null (a source added later by a reload, or a per-service cluster of route by
     * registry, never takes a serving gateway out of its load balancer).
     */
    public synchronized String waitingFor() {
        if (initialSyncDone) {
            return null;
        }
        long now = nanos.getAsLong();
        List<String> waiting = new ArrayList<>();
        for (Attached a : attached.values()) {
            if (a.synced || a.timedOut) {
                continue;
            }
            long timeout = a.config.initialFetchTimeout().toNanos();
            if (now - a.attachedNanos >= timeout) {
                a.timedOut = true;
                if (timeout > 0) {
                    log.warn("discovery: cluster {}: {} gave no host list within initial_fetch_timeout {} ms: ready with"
                            + " its configured hosts ({})", a.cluster, a.label, timeout / 1_000_000, a.balancer.hosts().size());
                }
                continue;
            }
            waiting.add(a.cluster + " (" + a.label + ")");
        }
        if (waiting.isEmpty()) {
            initialSyncDone = !attached.isEmpty();
            return null;
        }
        waiting.sort(null);
        return String.join(", ", waiting);
    }

    /** Clusters that became ready by {@code initial_fetch_timeout} and still have no list from their source; null = none. */
    public synchronized String readyWithoutList() {
        List<String> l = new ArrayList<>();
        for (Attached a : attached.values()) {
            if (a.timedOut && !a.synced && a.config.initialFetchTimeout().toNanos() > 0) {
                l.add(a.cluster);
            }
        }
        l.sort(null);
        return l.isEmpty() ? null : "no host list yet from the source of cluster(s) " + l
                + " (initial_fetch_timeout passed; serving their configured hosts)";
    }

    /** ZooKeeper clients open now (one per registry address in use). */
    public synchronized int zooKeeperSessions() {
        return zooKeeper == null ? 0 : zooKeeper.open();
    }

    private synchronized ZooKeeperClients zooKeeperClients() {
        if (zooKeeper == null) {
            zooKeeper = new ZooKeeperClients();
        }
        return zooKeeper;
    }

    private synchronized NacosPollers nacosPollers() {
        if (nacos == null) {
            nacos = new NacosPollers();
        }
        return nacos;
    }

    @Override
    public synchronized void close() {
        for (String name : new ArrayList<>(attached.keySet())) {
            detach(name);
        }
        if (nacos != null) {
            nacos.close();
            nacos = null;
        }
        registry.remove(sessionsGauge);
    }

    /**
     * A stable digest of a host set: the first 48 bits of SHA-256 over the sorted
     * {@code address|weight|startMillis[|warmupMillis|warmupWeight]} lines (equal on every gateway that sees the same providers).
     */
    public static long digest(List<Host> hosts) {
        List<String> lines = new ArrayList<>();
        for (Host h : hosts) {
            Host.WarmUp w = h.warmUp();
            lines.add(h.address() + "|" + h.weight() + "|" + h.startMillis()
                    + (w == null ? "" : "|" + w.windowNanos() / 1_000_000 + "|" + w.weight()));
        }
        lines.sort(null);
        try {
            MessageDigest md = MessageDigest.getInstance("SHA-256");
            for (String l : lines) {
                md.update(l.getBytes(StandardCharsets.UTF_8));
                md.update((byte) '\n');
            }
            byte[] d = md.digest();
            long v = 0;
            for (int i = 0; i < 6; i++) {
                v = (v << 8) | (d[i] & 0xff);
            }
            return v;
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /** One cluster's running source, its state and meters. */
    private final class Attached implements HostSource.Sink {
        final String cluster;
        final DiscoveryConfig config;
        volatile ClusterBalancer balancer;
        HostSource source;
        /** How log lines name the source. */
        volatile String label = "";
        final List<Meter> meters = new ArrayList<>();
        final Counter parseFailures;
        volatile String state = "starting";
        volatile boolean connected;
        volatile boolean emptyProtected;
        volatile long digest;
        volatile long lastUpdateMillis;
        volatile List<DiscoveredHost> last;
        volatile boolean stopped;
        /** discovery readiness: the source's first list was applied / initial_fetch_timeout passed without it. */
        volatile boolean synced;
        boolean timedOut;
        final long attachedNanos = nanos.getAsLong();

        Attached(String cluster, DiscoveryConfig config, ClusterBalancer balancer) {
            this.cluster = cluster;
            this.config = config;
            this.balancer = balancer;
            this.parseFailures = Counter.builder("sluice.discovery.parse_failures").tag("cluster", cluster)
                    .description("Registry entries skipped because they do not parse").register(registry);
            meters.add(parseFailures);
            meters.add(Gauge.builder("sluice.discovery.connected", this, a -> a.connected ? 1 : 0).tag("cluster", cluster)
                    .description("1 while the cluster's discovery source is connected (0 = serving the last known hosts)")
                    .register(registry));
            meters.add(Gauge.builder("sluice.discovery.empty_protected", this, a -> a.emptyProtected ? 1 : 0)
                    .tag("cluster", cluster)
                    .description("1 while the source lists no host and the last non-empty set is kept (allow_empty false)")
                    .register(registry));
            meters.add(Gauge.builder("sluice.discovery.synced", this, a -> a.synced ? 1 : 0).tag("cluster", cluster)
                    .description("1 once the source's first host list was applied (GET /ready waits for it at start)")
                    .register(registry));
            meters.add(Gauge.builder("sluice.discovery.hosts", this, a -> a.balancer.hosts().size()).tag("cluster", cluster)
                    .description("Hosts the cluster has from its discovery source").register(registry));
            meters.add(Gauge.builder("sluice.discovery.hosts_digest", this, a -> (double) a.digest).tag("cluster", cluster)
                    .description("Stable hash (48 bits of SHA-256) of the cluster's discovered hosts, weights and start"
                            + " times: equal on every gateway that sees the same registry")
                    .register(registry));
        }

        void start() {
            HostSource s = switch (config.type()) {
                case DiscoveryConfig.ZOOKEEPER -> new ZooKeeperSofaSource(config, parseFailures::increment, zooKeeperClients());
                case DiscoveryConfig.DNS -> dnsSources.apply(config);
                case DiscoveryConfig.NACOS -> new NacosHostSource(config, parseFailures::increment, nacosPollers());
                default -> customSources.get(config.source()).get();
            };
            source = s;
            label = DiscoveryConfig.CUSTOM.equals(config.type()) ? "custom source \"" + config.source() + "\"" : s.toString();
            log.info("discovery: cluster {}: following {}", cluster, label);
            try {
                s.start(this);
            } catch (Exception e) {
                log.warn("discovery: cluster {}: {} failed to start ({}); keeping the configured hosts",
                        cluster, label, e.toString());
                state("failed", false);
            }
        }

        void stop() {
            stopped = true;
            HostSource s = source;
            if (s != null) {
                try {
                    s.close();
                } catch (RuntimeException e) {
                    log.warn("discovery: cluster {}: closing {} failed: {}", cluster, s, e.toString());
                }
            }
            meters.forEach(registry::remove);
            for (Meter m : registry.getMeters()) {
                String n = m.getId().getName();
                if (n.startsWith("sluice.discovery.") && cluster.equals(m.getId().getTag("cluster"))) {
                    registry.remove(m);
                }
            }
        }

        @Override
        public void state(String newState, boolean nowConnected) {
            synchronized (DiscoveryHub.this) {
                if (stopped) {
                    return;
                }
                boolean was = connected;
                boolean first = "starting".equals(state);
                state = newState;
                connected = nowConnected;
                String word = newState.split(" ")[0];
                registry.counter("sluice.discovery.state_changes", "cluster", cluster, "state", word).increment();
                int n = balancer.hosts().size();
                if (nowConnected) {
                    log.info("discovery: cluster {}: {} {}{}", cluster, label, newState,
                            was || first ? "" : "; hosts follow the source again (" + n + " now)");
                } else {
                    log.warn("discovery: cluster {}: {} {}: keeping the last {} host(s) until it is back",
                            cluster, label, newState, n);
                }
            }
        }

        @Override
        public void hosts(List<DiscoveredHost> hosts) {
            List<DiscoveredHost> list = List.copyOf(hosts);
            synchronized (DiscoveryHub.this) {
                if (stopped) {
                    return;
                }
                ClusterBalancer b = balancer;
                if (!synced) {
                    synced = true; // the source answered (even an empty list counts): /ready need not wait for it
                    if (timedOut) {
                        log.info("discovery: cluster {}: first host list from {} (after initial_fetch_timeout)", cluster, label);
                    }
                }
                if (list.isEmpty() && !config.allowEmpty() && !b.hosts().isEmpty()) {
                    count("protected_empty");
                    if (!emptyProtected) {
                        emptyProtected = true;
                        log.warn("discovery: cluster {}: {} lists no host: keeping the last {} host(s)"
                                + " (allow_empty is false)", cluster, label, b.hosts().size());
                    }
                    return;
                }
                if (emptyProtected) {
                    emptyProtected = false;
                    log.info("discovery: cluster {}: {} lists hosts again", cluster, label);
                }
                Map<String, Host> before = new HashMap<>();
                for (Host h : b.hosts()) {
                    before.put(h.address(), h);
                }
                Map<String, Integer> weightsBefore = new HashMap<>();
                Map<String, Long> startsBefore = new HashMap<>();
                for (Host h : before.values()) {
                    weightsBefore.put(h.address(), h.weight());
                    startsBefore.put(h.address(), h.startMillis());
                }
                last = list;
                List<Host> now = b.applyDiscovered(list, wallMillis.getAsLong());
                applied.accept(b);
                long d = digest(now);
                List<String> added = new ArrayList<>();
                List<String> changed = new ArrayList<>();
                for (Host h : now) {
                    String desc = h.address() + " w=" + h.weight() + (h.startMillis() > 0 ? " start=" + h.startMillis() : "")
                            + (h.warmUp() == null ? "" : " warmup=" + h.warmUp().windowNanos() / 1_000_000 + "ms"
                            + (h.warmUp().weight() >= 0 ? "/" + h.warmUp().weight() : ""));
                    Integer w = weightsBefore.remove(h.address());
                    Long st = startsBefore.remove(h.address());
                    if (w == null) {
                        added.add(desc);
                    } else if (w != h.weight() || st != h.startMillis()) {
                        changed.add(desc);
                    }
                }
                lastUpdateMillis = wallMillis.getAsLong();
                if (d == digest && added.isEmpty() && changed.isEmpty() && weightsBefore.isEmpty()) {
                    count("unchanged");
                    return;
                }
                digest = d;
                count("applied");
                log.info("discovery: cluster {}: {} host(s){}{}{} (digest {})", cluster, now.size(),
                        added.isEmpty() ? "" : ", added " + added, changed.isEmpty() ? "" : ", changed " + changed,
                        weightsBefore.isEmpty() ? "" : ", removed " + new ArrayList<>(weightsBefore.keySet()),
                        Long.toHexString(d));
            }
        }

        private void count(String result) {
            registry.counter("sluice.discovery.updates", "cluster", cluster, "result", result).increment();
        }
    }
}
