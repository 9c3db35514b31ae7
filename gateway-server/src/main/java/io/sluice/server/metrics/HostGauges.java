package io.sluice.server.metrics;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.sluice.core.cluster.HealthStatus;
import io.sluice.core.cluster.Host;
import io.sluice.lb.ClusterBalancer;

import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Per-host gauges of every cluster, tagged {@code cluster} and {@code host} ({@code ip:port}):
 * {@code sluice.upstream.host.effective.weight} (the weight the balancer gives the host now),
 * {@code sluice.upstream.host.warmup.factor} (slow-start factor, 1 = warm),
 * {@code sluice.upstream.host.healthy} (0 while active checks fail it, else 1) and
 * {@code sluice.upstream.host.ejected} (1 while outlier detection holds it out). Read on scrape only.
 * {@link #sync} follows a cluster's host set after a start or reload: hosts that left lose their
 * meters, hosts that came get theirs. Called under the gateway's lock, or by a discovery source's thread.
 */
public final class HostGauges {

    private final MeterRegistry registry;
    /** cluster → address → the host object the meters read, and the meters. */
    private final Map<String, Map<String, Registered>> clusters = new HashMap<>();

    private record Registered(Host host, List<Meter> meters) {
    }

    public HostGauges(MeterRegistry registry) {
        this.registry = registry;
    }

    /** Registers the meters of hosts new to {@code balancer}'s cluster and removes those of hosts gone. */
    public synchronized void sync(ClusterBalancer balancer) {
        String cluster = balancer.name();
        Map<String, Registered> old = clusters.getOrDefault(cluster, Map.of());
        Map<String, Registered> now = new LinkedHashMap<>();
        for (Host h : balancer.hosts()) {
            Registered r = old.get(h.address());
            if (r == null || r.host() != h) {
                if (r != null) {
                    r.meters().forEach(registry::remove); // same address, new host object (cluster replaced)
                }
                r = new Registered(h, register(balancer, cluster, h));
            }
            now.put(h.address(), r);
        }
        for (Map.Entry<String, Registered> e : old.entrySet()) {
            if (!now.containsKey(e.getKey())) {
                e.getValue().meters().forEach(registry::remove);
            }
        }
        clusters.put(cluster, now);
    }

    /** Removes every host meter of {@code cluster}. */
    public synchronized void remove(String cluster) {
        Map<String, Registered> gone = clusters.remove(cluster);
        if (gone != null) {
            for (Registered r : gone.values()) {
                r.meters().forEach(registry::remove);
            }
        }
    }

    private List<Meter> register(ClusterBalancer b, String cluster, Host h) {
        String[] tags = {"cluster", cluster, "host", h.address()};
        return List.of(
                Gauge.builder("sluice.upstream.host.effective.weight", h, b::effectiveWeight).tags(tags).strongReference(true)
                        .description("Weight the load balancer gives the host now (configured, clamped, x warm-up factor)")
                        .register(registry),
                Gauge.builder("sluice.upstream.host.warmup.factor", h, b::warmUpFactor).tags(tags).strongReference(true)
                        .description("Slow-start factor of the host: from min_weight_percent up to 1 (warm)")
                        .register(registry),
                Gauge.builder("sluice.upstream.host.healthy", h, x -> x.health() == HealthStatus.UNHEALTHY ? 0 : 1)
                        .tags(tags).strongReference(true)
                        .description("0 while active health checks fail the host, else 1").register(registry),
                Gauge.builder("sluice.upstream.host.ejected", h, x -> x.ejected() ? 1 : 0).tags(tags).strongReference(true)
                        .description("1 while passive outlier detection holds the host out").register(registry));
    }
}
