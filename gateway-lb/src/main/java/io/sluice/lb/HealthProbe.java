package io.sluice.lb;

import io.sluice.core.cluster.Host;
import io.sluice.core.config.ClusterConfig;

/**
 * The transport half of active health checking: sends one probe to a host and reports the verdict.
 * The checker in this module owns everything else (scheduling, jitter, timeouts, attempt ids,
 * thresholds, flipping {@link Host#health()}, warm-up and notifications), so a probe stays small:
 * TCP connect, HTTP request, Bolt heartbeat (supplied by the server with Netty), or a custom check.
 *
 * <p>A probe must not block the calling thread; it may complete the callback on any thread, at most
 * once. A callback completed after the checker's timeout is ignored.
 */
@FunctionalInterface
public interface HealthProbe {

    /** Starts one probe of {@code host}; reports the outcome through {@code callback}. */
    void probe(Host host, ProbeCallback callback);

    /**
     * Creates the probe of a cluster (from {@link ClusterConfig#healthCheck()}: probe name, HTTP path,
     * expected statuses...). Called when a cluster with a health check is built or its check changes.
     */
    @FunctionalInterface
    interface Factory {
        HealthProbe create(ClusterConfig cluster);
    }
}
