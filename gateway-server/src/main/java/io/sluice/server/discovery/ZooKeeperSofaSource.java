package io.sluice.server.discovery;

import io.sluice.core.config.DiscoveryConfig;
import io.sluice.core.discovery.DiscoveredHost;
import io.sluice.core.discovery.HostSource;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.cache.ChildData;
import org.apache.curator.framework.recipes.cache.CuratorCache;
import org.apache.curator.framework.recipes.cache.CuratorCacheListener;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.framework.state.ConnectionStateListener;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * The providers of one SOFARPC service in a ZooKeeper registry (SOFARPC's {@code registry-zk} layout,
 * docs/discovery.md): one Curator client and one {@link CuratorCache} on
 * {@code {root}sofa-rpc/{interface}/providers}. Every cache event schedules (debounced) a
 * recomputation of the <em>whole</em> list from the cached children — decode, parse, keep the
 * service's protocol and uniqueId, one host per address (the child with the latest {@code startTime}
 * when a restarted provider briefly has two) — never per-event deltas (a crashed provider's late
 * delete must not remove its restarted successor).
 *
 * <p>Connection states: SUSPENDED and LOST freeze the list (nothing is published; the gateway keeps
 * serving the last one); RECONNECTED publishes once the cache has rebuilt (after a short settle).
 * ZooKeeper's client runs on its NIO socket (no Netty). Curator's and this source's threads are daemons.
 * Sources on the same registry address share one Curator client (one session) through {@link ZooKeeperClients}.
 */
public final class ZooKeeperSofaSource implements HostSource {

    private static final Logger log = LoggerFactory.getLogger(ZooKeeperSofaSource.class);
    /** Coalesces bursts of cache events into one publication. */
    static final long DEBOUNCE_MS = 50;
    /** After RECONNECTED, the cache re-reads the tree: publish when it has settled. */
    static final long RECONNECT_SETTLE_MS = 200;

    private final DiscoveryConfig config;
    private final SofaService service;
    private final String connectString;
    private final String providersPath;
    private final Runnable onParseFailure;
    private final ZooKeeperClients clients;
    private volatile ZooKeeperClients.Lease lease;
    private final ConnectionStateListener stateListener = (cf, state) -> stateChanged(state);
    /** The last state reported (executor thread). */
    private ConnectionState lastState;
    /** The thread of the shared client (one per ZooKeeper session, not one per source); set by start(). */
    private volatile ScheduledExecutorService executor;
    private volatile CuratorFramework client;
    private volatile CuratorCache cache;
    private volatile Sink sink;
    private volatile boolean connected;
    private volatile boolean initialized;
    private volatile boolean closed;
    /** Guarded by this. */
    private ScheduledFuture<?> pending;
    /** Child names already reported as unparseable (one log line each). Executor thread only. */
    private final Set<String> badChildren = new HashSet<>();

    /**
     * @param onParseFailure counted once per child that cannot be parsed (the child is skipped)
     */
    public ZooKeeperSofaSource(DiscoveryConfig config, Runnable onParseFailure) {
        this(config, onParseFailure, new ZooKeeperClients());
    }

    /** A source whose Curator client (ZooKeeper session) is shared with the other sources on the same registry. */
    ZooKeeperSofaSource(DiscoveryConfig config, Runnable onParseFailure, ZooKeeperClients clients) {
        this.clients = clients;
        this.config = config;
        this.service = SofaService.parse(config.service());
        String address = config.address().trim();
        int slash = address.indexOf('/');
        String root = "/";
        if (slash >= 0) {
            root = address.substring(slash);
            address = address.substring(0, slash);
            if (!root.endsWith("/")) {
                root = root + "/";
            }
        }
        this.connectString = address;
        this.providersPath = service.providersPath(root);
        this.onParseFailure = onParseFailure;
    }

    /** The watched path, {@code {root}sofa-rpc/{interface}/providers}. */
    public String providersPath() {
        return providersPath;
    }

    @Override
    public void start(Sink s) {
        this.sink = s;
        ZooKeeperClients.Lease l = clients.acquire(connectString, (int) config.sessionTimeout().toMillis(),
                (int) config.connectionTimeout().toMillis());
        this.lease = l;
        ScheduledExecutorService executor = l.executor();
        this.executor = executor;
        CuratorFramework c = l.client();
        c.getConnectionStateListenable().addListener(stateListener, executor);
        CuratorCache cc = CuratorCache.build(c, providersPath);
        cc.listenable().addListener(CuratorCacheListener.builder()
                .forAll((type, oldData, data) -> schedule(DEBOUNCE_MS))
                .forInitialized(() -> {
                    initialized = true;
                    schedule(0);
                })
                .build(), executor);
        this.client = c;
        this.cache = cc;
        cc.start();
        // a shared client may be connected already: it will not say CONNECTED again
        executor.execute(() -> {
            if (lastState == null && c.getZookeeperClient().isConnected()) {
                stateChanged(ConnectionState.CONNECTED);
            }
        });
    }

    private void stateChanged(ConnectionState state) {
        if (closed || state == lastState) {
            return;
        }
        lastState = state;
        connected = state.isConnected();
        String extra = "";
        if (state == ConnectionState.CONNECTED || state == ConnectionState.RECONNECTED) {
            try {
                extra = " (session timeout " + client.getZookeeperClient().getZooKeeper().getSessionTimeout() + " ms)";
            } catch (Exception e) {
                // informational only
            }
        }
        sink.state(state.name().toLowerCase(Locale.ROOT) + extra, connected);
        if (state == ConnectionState.RECONNECTED) {
            schedule(RECONNECT_SETTLE_MS);
        }
    }

    private synchronized void schedule(long delayMs) {
        if (closed) {
            return;
        }
        if (pending != null && !pending.isDone()) {
            if (pending.getDelay(TimeUnit.MILLISECONDS) >= delayMs) {
                pending.cancel(false);
            } else {
                return;
            }
        }
        pending = executor.schedule(this::publish, delayMs, TimeUnit.MILLISECONDS);
    }

    /** Recomputes the list from the cache and publishes it (executor thread). Not while disconnected. */
    private void publish() {
        CuratorCache cc = cache;
        if (closed || cc == null || !connected || !initialized) {
            return;
        }
        String prefix = providersPath + "/";
        Map<String, DiscoveredHost> byAddress = new LinkedHashMap<>();
        List<ChildData> children = new ArrayList<>();
        cc.stream().forEach(children::add);
        children.sort((a, b) -> a.getPath().compareTo(b.getPath()));
        for (ChildData child : children) {
            String path = child.getPath();
            if (!path.startsWith(prefix) || path.indexOf('/', prefix.length()) >= 0) {
                continue; // the providers node itself, or something deeper
            }
            String name = path.substring(prefix.length());
            SofaProvider p;
            try {
                p = SofaProvider.parse(name);
            } catch (IllegalArgumentException e) {
                if (badChildren.add(name)) {
                    onParseFailure.run();
                    log.warn("discovery: {}: skipping a provider node that does not parse: {}", providersPath, e.getMessage());
                }
                continue;
            }
            if (!p.matches(service, config.protocol())) {
                continue;
            }
            DiscoveredHost h = new DiscoveredHost(p.host(), p.port(), p.weight(), p.startTime(), "zookeeper",
                    p.warmupTime(), p.warmupWeight()); // the provider's own warm-up (docs/discovery.md)
            DiscoveredHost prev = byAddress.get(h.address());
            // a provider killed and restarted has two children until the old session expires: the newest wins
            if (prev == null || h.startMillis() > prev.startMillis()) {
                byAddress.put(h.address(), h);
            }
        }
        Sink s = sink;
        if (s != null && !closed) {
            s.hosts(Collections.unmodifiableList(new ArrayList<>(byAddress.values())));
        }
    }

    @Override
    public void close() {
        closed = true;
        synchronized (this) {
            if (pending != null) {
                pending.cancel(false);
            }
        }
        CuratorCache cc = cache;
        if (cc != null) {
            cc.close();
        }
        CuratorFramework c = client;
        if (c != null) {
            c.getConnectionStateListenable().removeListener(stateListener);
        }
        ZooKeeperClients.Lease l = lease;
        if (l != null) {
            l.release();
        }
    }

    @Override
    public String toString() {
        return "zookeeper " + connectString + " " + providersPath + " (" + config.service() + ")";
    }
}
