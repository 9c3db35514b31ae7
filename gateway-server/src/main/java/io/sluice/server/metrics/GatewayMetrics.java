package io.sluice.server.metrics;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.jvm.ClassLoaderMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmGcMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmThreadMetrics;
import io.micrometer.core.instrument.binder.system.ProcessorMetrics;
import io.micrometer.core.instrument.binder.system.UptimeMetrics;
import io.netty.buffer.ByteBufAllocatorMetric;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.ChannelHandler;
import io.netty.util.internal.PlatformDependent;
import io.sluice.lb.ClusterBalancer;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The gateway-wide meters and the per-cluster {@link ClusterMetrics}: config reloads and version,
 * JVM and Netty allocator gauges, and the lookup the upstream pools use when they open a
 * connection (a map read per new connection, never per request).
 *
 * <ul>
 *   <li>{@code sluice.config.reloads{result}}, {@code sluice.config.version}, {@code sluice.config.hash}</li>
 *   <li>{@code sluice.netty.allocator.memory.used{memory=direct|heap}},
 *       {@code sluice.netty.direct.memory.used}</li>
 *   <li>with {@code jvm} on: Micrometer's JVM binders ({@code jvm.memory.*}, {@code jvm.buffer.*},
 *       {@code jvm.gc.*}, {@code jvm.threads.*}, {@code jvm.classes.*}, {@code process.*}, {@code system.cpu.*})</li>
 * </ul>
 */
public final class GatewayMetrics implements AutoCloseable {

    private final MeterRegistry registry;
    private final boolean record;
    private final List<Meter> meters = new ArrayList<>();
    private final Counter reloadSuccesses;
    private final Counter reloadFailures;
    private final AtomicLong version = new AtomicLong(1);
    private volatile long hash;
    /** Replaced as a whole (copy on write) under the gateway's lock; read from event loops. */
    private volatile Map<String, ClusterMetrics> clusters = Map.of();
    private JvmGcMetrics gc;

    /**
     * @param record false: the registry records nothing ({@code admin.metrics: false})
     * @param jvm    bind Micrometer's JVM binders (only to a registry the gateway owns)
     */
    public GatewayMetrics(MeterRegistry registry, boolean record, boolean jvm) {
        this.registry = registry;
        this.record = record;
        reloadSuccesses = add(Counter.builder("sluice.config.reloads").tag("result", "success")
                .description("Config reloads applied (success) or rejected (failure)").register(registry));
        reloadFailures = add(Counter.builder("sluice.config.reloads").tag("result", "failure")
                .description("Config reloads applied (success) or rejected (failure)").register(registry));
        add(Gauge.builder("sluice.config.version", version, AtomicLong::get)
                .description("Version of the running config: 1 at start, +1 per successful reload").register(registry));
        add(Gauge.builder("sluice.config.hash", this, m -> m.hash)
                .description("32-bit hash of the running config's canonical JSON (equal configs, equal hash)")
                .register(registry));
        ByteBufAllocatorMetric pooled = PooledByteBufAllocator.DEFAULT.metric();
        add(Gauge.builder("sluice.netty.allocator.memory.used", pooled, ByteBufAllocatorMetric::usedDirectMemory)
                .tags("allocator", "pooled", "memory", "direct").baseUnit("bytes")
                .description("Memory held by Netty's pooled allocator (arenas, including free space in chunks)")
                .register(registry));
        add(Gauge.builder("sluice.netty.allocator.memory.used", pooled, ByteBufAllocatorMetric::usedHeapMemory)
                .tags("allocator", "pooled", "memory", "heap").baseUnit("bytes")
                .description("Memory held by Netty's pooled allocator (arenas, including free space in chunks)")
                .register(registry));
        add(Gauge.builder("sluice.netty.direct.memory.used", () -> Math.max(0, PlatformDependent.usedDirectMemory()))
                .baseUnit("bytes").description("Direct memory Netty allocated (all allocators; 0 if Netty cannot count it)")
                .register(registry));
        if (jvm) {
            new JvmMemoryMetrics().bindTo(registry);
            gc = new JvmGcMetrics();
            gc.bindTo(registry);
            new JvmThreadMetrics().bindTo(registry);
            new ClassLoaderMetrics().bindTo(registry);
            new ProcessorMetrics().bindTo(registry);
            new UptimeMetrics().bindTo(registry);
        }
    }

    private <M extends Meter> M add(M m) {
        meters.add(m);
        return m;
    }

    public MeterRegistry registry() {
        return registry;
    }

    /** False when metrics are off: listeners then record nothing and add no counting handlers. */
    public boolean recording() {
        return record;
    }

    /** A successful reload made {@code newVersion} the running config, whose canonical JSON hashes to {@code configHash}. */
    public void reloaded(long newVersion, int configHash) {
        version.set(newVersion);
        hash = configHash;
        reloadSuccesses.increment();
    }

    public void configHash(int configHash) {
        hash = configHash;
    }

    public void reloadRejected() {
        reloadFailures.increment();
    }

    public long version() {
        return version.get();
    }

    /** The meters of a cluster, or null (unknown cluster, or metrics off). */
    public ClusterMetrics cluster(String name) {
        return clusters.get(name);
    }

    /** The sharable upstream connection-counting handler of a cluster, or null. */
    public ChannelHandler upstreamConnectionHandler(String cluster) {
        ClusterMetrics cm = clusters.get(cluster);
        return cm == null ? null : cm.connectionHandler();
    }

    /** Creates the meters of a new (or replaced) cluster; under the gateway's lock. */
    public void addCluster(ClusterBalancer b) {
        if (!record) {
            return;
        }
        Map<String, ClusterMetrics> next = new HashMap<>(clusters);
        ClusterMetrics old = next.put(b.name(), new ClusterMetrics(registry, b));
        if (old != null) {
            old.close();
        }
        clusters = Collections.unmodifiableMap(next);
    }

    /** Deletes the meters of a removed cluster; under the gateway's lock. */
    public void removeCluster(String name) {
        Map<String, ClusterMetrics> next = new HashMap<>(clusters);
        ClusterMetrics old = next.remove(name);
        if (old != null) {
            old.close();
            clusters = Collections.unmodifiableMap(next);
        }
    }

    @Override
    public void close() {
        for (ClusterMetrics cm : clusters.values()) {
            cm.close();
        }
        clusters = Map.of();
        meters.forEach(registry::remove);
        if (gc != null) {
            gc.close();
        }
    }
}
