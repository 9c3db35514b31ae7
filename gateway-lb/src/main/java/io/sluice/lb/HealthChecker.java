package io.sluice.lb;

import io.sluice.core.cluster.Host;
import io.sluice.core.config.HealthCheckConfig;
import io.sluice.core.time.Scheduler;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Active health checking of one cluster's hosts: subscribes each host to the {@link HealthCheckHub}
 * loop of its address and this cluster's settings (so a host shared with another cluster that has
 * the same settings is probed once), and unsubscribes hosts no longer listed. Transitions are
 * written to {@link Host#health} by the loop and reported to the sink.
 */
final class HealthChecker implements AutoCloseable {

    private final HealthCheckConfig config;
    private final HealthProbe probe;
    private final Scheduler scheduler;
    private final ThreadRandom random;
    private final HealthCheckHub hub;
    private final HealthCheckHub.Sink sink;
    private final Map<Host, HealthCheckHub.Subscription> checks = new HashMap<>();
    private final Object transport;
    private boolean closed;

    HealthChecker(HealthCheckConfig config, HealthProbe probe, Scheduler scheduler, ThreadRandom random,
                  HealthCheckHub hub, HealthCheckHub.Sink sink) {
        this(config, null, probe, scheduler, random, hub, sink);
    }

    /** @param transport how the probe connects (the cluster's upstream TLS settings), part of what a shared loop is keyed by */
    HealthChecker(HealthCheckConfig config, Object transport, HealthProbe probe, Scheduler scheduler, ThreadRandom random,
                  HealthCheckHub hub, HealthCheckHub.Sink sink) {
        this.transport = transport;
        this.config = config;
        this.probe = probe;
        this.scheduler = scheduler;
        this.random = random;
        this.hub = hub;
        this.sink = sink;
    }

    HealthCheckConfig config() {
        return config;
    }

    Object transport() {
        return transport;
    }

    /** Starts checking hosts not yet checked and stops checking hosts no longer listed. */
    synchronized void hosts(List<Host> hosts) {
        if (closed) {
            return;
        }
        Map<Host, HealthCheckHub.Subscription> keep = new HashMap<>();
        for (Host h : hosts) {
            HealthCheckHub.Subscription s = checks.remove(h);
            keep.put(h, s != null ? s : hub.subscribe(h, config, transport, probe, scheduler, random, sink));
        }
        for (HealthCheckHub.Subscription gone : checks.values()) {
            gone.cancel();
        }
        checks.clear();
        checks.putAll(keep);
    }

    @Override
    public synchronized void close() {
        closed = true;
        for (HealthCheckHub.Subscription s : checks.values()) {
            s.cancel();
        }
        checks.clear();
    }
}
