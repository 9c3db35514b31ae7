package io.sluice.server.discovery;

import io.sluice.core.config.ClusterConfig;
import io.sluice.core.time.Ticker;
import io.sluice.lb.ClusterBalancer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * Route by registry: the clusters of a template cluster whose discovery names {@code service: "*"}.
 * A Bolt request without a route whose listener's default cluster is the template goes to the
 * cluster of its {@code service} header ({@link #child}); the first request for a service starts the
 * cluster's discovery off the event loop and is answered NO_PROCESSOR (the cluster follows the
 * registry within a round trip); at most {@code max_services} services at once; a service unused for
 * {@code idle_timeout} is dropped ({@link #expireIdle}, run periodically). Services that differ only
 * in version share a cluster (the registry does not know versions).
 *
 * <p>{@link #child} runs on event loops: a map lookup and a volatile write, no lock, no allocation on
 * a hit.
 */
public final class RegistryRouter {

    private static final Logger log = LoggerFactory.getLogger(RegistryRouter.class);

    private final ClusterConfig template;
    private final Function<ClusterConfig, ClusterBalancer> build;
    private final Consumer<ClusterBalancer> retire;
    private final Executor executor;
    private final Ticker ticker;
    /** Registry key (interface[:uniqueId]) -> its cluster. */
    private final Map<String, Child> children = new ConcurrentHashMap<>();
    /** Keys whose cluster is being built. */
    private final Set<String> pending = ConcurrentHashMap.newKeySet();
    /** Header value -> registry key, so that a hit parses nothing. Bounded like the children. */
    private final Map<String, String> keys = new ConcurrentHashMap<>();
    private volatile boolean closed;

    private static final class Child {
        final ClusterBalancer balancer;
        volatile long lastUsed;

        Child(ClusterBalancer balancer, long now) {
            this.balancer = balancer;
            this.lastUsed = now;
        }
    }

    /**
     * @param build    builds and starts a cluster (with its discovery source) from a config; off the event loops
     * @param retire   stops a cluster's source and closes it
     * @param executor where clusters are built and retired (not an event loop)
     */
    public RegistryRouter(ClusterConfig template, Function<ClusterConfig, ClusterBalancer> build,
                          Consumer<ClusterBalancer> retire, Executor executor, Ticker ticker) {
        this.template = template;
        this.build = build;
        this.retire = retire;
        this.executor = executor;
        this.ticker = ticker;
    }

    /** The cluster for a {@code service} header, or null while it is being discovered (or the limit is reached). */
    public ClusterBalancer child(String service) {
        String key = keys.get(service);
        if (key != null) {
            Child c = children.get(key);
            if (c != null) {
                c.lastUsed = ticker.nanoTime();
                return c.balancer;
            }
        }
        SofaService s;
        try {
            s = SofaService.parse(service);
        } catch (IllegalArgumentException e) {
            return null;
        }
        key = s.key();
        Child c = children.get(key);
        if (c != null) {
            if (keys.size() < 4 * max()) {
                keys.put(service, key);
            }
            c.lastUsed = ticker.nanoTime();
            return c.balancer;
        }
        if (!closed && children.size() + pending.size() < max() && pending.add(key)) {
            String k = key;
            executor.execute(() -> create(k, service));
        }
        return null;
    }

    private int max() {
        return template.discovery().maxServices();
    }

    private void create(String key, String service) {
        try {
            if (closed) {
                return;
            }
            ClusterConfig config = template.toBuilder().name(template.name() + "/" + key)
                    .discovery(template.discovery().withService(service)).build();
            ClusterBalancer b = build.apply(config);
            children.put(key, new Child(b, ticker.nanoTime()));
            log.info("discovery: cluster {}: routing service {} to new cluster {} ({} of at most {})", template.name(),
                    service, config.name(), children.size(), max());
            if (closed) {
                close();
            }
        } catch (RuntimeException e) {
            log.warn("discovery: cluster {}: cannot discover service {}: {}", template.name(), service, e.toString());
        } finally {
            pending.remove(key);
        }
    }

    /** Drops the clusters unused for {@code idle_timeout}; returns how many. Not on an event loop. */
    public int expireIdle() {
        long now = ticker.nanoTime();
        long idle = template.discovery().idleTimeout().toNanos();
        List<String> gone = new ArrayList<>();
        for (Map.Entry<String, Child> e : children.entrySet()) {
            if (now - e.getValue().lastUsed >= idle && children.remove(e.getKey(), e.getValue())) {
                gone.add(e.getKey());
                keys.values().removeIf(e.getKey()::equals);
                retire.accept(e.getValue().balancer);
            }
        }
        if (!gone.isEmpty()) {
            log.info("discovery: cluster {}: dropped idle services {}", template.name(), gone);
        }
        return gone.size();
    }

    /** The services discovered now (registry keys). */
    public Set<String> services() {
        return Set.copyOf(children.keySet());
    }

    /** The clusters discovered now, by name ({@code template/key}), for the admin API. */
    public Map<String, ClusterBalancer> clusters() {
        Map<String, ClusterBalancer> m = new java.util.TreeMap<>();
        for (Child c : children.values()) {
            m.put(c.balancer.name(), c.balancer);
        }
        return m;
    }

    /** Retires every cluster. */
    public void close() {
        closed = true;
        for (String k : new ArrayList<>(children.keySet())) {
            Child c = children.remove(k);
            if (c != null) {
                retire.accept(c.balancer);
            }
        }
        keys.clear();
    }
}
