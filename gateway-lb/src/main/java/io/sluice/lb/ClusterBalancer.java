package io.sluice.lb;

import io.sluice.core.cluster.Host;
import io.sluice.core.cluster.Outcome;
import io.sluice.core.config.ClusterConfig;
import io.sluice.core.config.HostConfig;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The load-balancing side of one cluster: its current host set, the picker, and (later) health
 * checks and outlier ejection. One instance per cluster, shared by all event loops.
 *
 * <p>First increment: rotation over available hosts. The EDF scheduler with slow start replaces
 * the picker in the load-balancing issue; this class's surface stays.
 */
public final class ClusterBalancer implements AutoCloseable {

    private volatile ClusterConfig config;
    private volatile List<Host> hosts;
    private final AtomicInteger next = new AtomicInteger();

    private ClusterBalancer(ClusterConfig config, List<Host> hosts) {
        this.config = config;
        this.hosts = hosts;
    }

    /** Builds the balancer for {@code config}. */
    public static ClusterBalancer create(ClusterConfig config, LbContext context) {
        List<Host> hosts = new ArrayList<>();
        for (HostConfig h : config.hosts()) {
            hosts.add(new Host(h));
        }
        return new ClusterBalancer(config, List.copyOf(hosts));
    }

    public String name() {
        return config.name();
    }

    public ClusterConfig config() {
        return config;
    }

    /** The current host snapshot. */
    public List<Host> hosts() {
        return hosts;
    }

    /** Picks a host for one request, or returns {@code null} when no host can take it. */
    public Host pick() {
        List<Host> snapshot = hosts;
        int n = snapshot.size();
        for (int i = 0; i < n; i++) {
            Host h = snapshot.get(Math.floorMod(next.getAndIncrement(), n));
            if (h.available()) {
                return h;
            }
        }
        return null;
    }

    /** Reports how a request to {@code host} ended (feeds passive outlier detection). */
    public void onOutcome(Host host, Outcome outcome) {
        // outlier detection arrives with the load-balancing issue
    }

    /** Applies a reloaded config in place: kept addresses keep their state, new ones are added. */
    public void update(ClusterConfig newConfig) {
        Map<String, Host> old = new HashMap<>();
        for (Host h : hosts) {
            old.put(h.address(), h);
        }
        List<Host> fresh = new ArrayList<>();
        for (HostConfig hc : newConfig.hosts()) {
            Host kept = old.get(hc.address());
            if (kept != null) {
                kept.weight(hc.weight());
                fresh.add(kept);
            } else {
                fresh.add(new Host(hc));
            }
        }
        this.config = newConfig;
        this.hosts = List.copyOf(fresh);
    }

    @Override
    public void close() {
    }
}
