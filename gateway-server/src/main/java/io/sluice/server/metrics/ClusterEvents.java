package io.sluice.server.metrics;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.sluice.core.cluster.HealthStatus;
import io.sluice.core.cluster.Host;
import io.sluice.lb.ClusterBalancer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.Locale;
import java.util.function.Consumer;

/**
 * Turns the load balancer's state changes into one log line each and counters:
 * {@code sluice.cluster.health.transitions{cluster, to}}, {@code sluice.cluster.ejections{cluster}},
 * {@code sluice.cluster.panics{cluster}}. Called rarely (state changes only), possibly under the
 * balancer's lock, so it only logs and counts.
 */
public final class ClusterEvents implements ClusterBalancer.Listener {

    private static final Logger log = LoggerFactory.getLogger("io.sluice.cluster");

    private final MeterRegistry registry;
    private final Consumer<Host> onUnavailable;

    /**
     * @param onUnavailable called when a host fails its health check or is ejected (the gateway
     *                      closes its parked upstream connections, which may be dead)
     */
    public ClusterEvents(MeterRegistry registry, Consumer<Host> onUnavailable) {
        this.registry = registry;
        this.onUnavailable = onUnavailable;
    }

    @Override
    public void onHealthChanged(String cluster, Host host, HealthStatus from, HealthStatus to, String reason) {
        if (to == HealthStatus.UNHEALTHY) {
            log.warn("cluster {}: host {} {} -> {} ({})", cluster, host.address(), lower(from), lower(to), reason);
        } else {
            log.info("cluster {}: host {} {} -> {} ({})", cluster, host.address(), lower(from), lower(to), reason);
        }
        if (to == HealthStatus.UNHEALTHY) {
            onUnavailable.accept(host);
        }
        Counter.builder("sluice.cluster.health.transitions").tags("cluster", cluster, "to", lower(to))
                .description("Active health check state changes").register(registry).increment();
    }

    @Override
    public void onEjected(String cluster, Host host, Duration duration, int ejections, String reason) {
        log.warn("cluster {}: host {} ejected for {} ms (ejection #{}: {})", cluster, host.address(), duration.toMillis(),
                ejections, reason);
        onUnavailable.accept(host);
        Counter.builder("sluice.cluster.ejections").tags("cluster", cluster)
                .description("Hosts ejected by passive outlier detection").register(registry).increment();
    }

    @Override
    public void onReturned(String cluster, Host host) {
        log.info("cluster {}: host {} returns from ejection (warming up)", cluster, host.address());
    }

    @Override
    public void onPanic(String cluster, boolean panicking) {
        if (panicking) {
            log.warn("cluster {}: too few available hosts, panic mode: balancing over all hosts", cluster);
            Counter.builder("sluice.cluster.panics").tags("cluster", cluster)
                    .description("Times a cluster entered panic mode").register(registry).increment();
        } else {
            log.info("cluster {}: enough hosts available again, panic mode over", cluster);
        }
    }

    private static String lower(HealthStatus s) {
        return s.name().toLowerCase(Locale.ROOT);
    }
}
