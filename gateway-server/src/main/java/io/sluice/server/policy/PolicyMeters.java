package io.sluice.server.policy;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.sluice.lb.ClusterBalancer;
import io.sluice.server.policy.breaker.CircuitBreaker;
import io.sluice.server.policy.breaker.Limit;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.LongAdder;

/**
 * The meters of a cluster's resilience policies (read from the counters when scraped, nothing
 * recorded per request): {@code sluice_cluster_breaker_remaining} / {@code _open} / {@code _overflows_total}
 * per {@code resource} (connections, pending, requests, retries), and
 * {@code sluice_cluster_retries_total} per {@code outcome} (retried, success, overflow,
 * limit_exceeded, body_too_large).
 */
public final class PolicyMeters {

    private PolicyMeters() {
    }

    /** Registers the meters of {@code c}'s policies; the caller removes them with the cluster. */
    public static List<Meter> register(MeterRegistry registry, ClusterBalancer c) {
        ClusterPolicies p = ClusterPolicies.of(c);
        CircuitBreaker b = p.breaker();
        String name = c.name();
        List<Meter> out = new ArrayList<>();
        limit(registry, out, name, "connections", b.connections());
        limit(registry, out, name, "pending", b.pending());
        limit(registry, out, name, "requests", b.requests());
        out.add(Gauge.builder("sluice.cluster.breaker.remaining", b, x -> Math.max(0, x.retryLimit() - x.retries().count()))
                .tags("cluster", name, "resource", "retries")
                .description("Concurrent retries the retry budget still allows").register(registry));
        out.add(Gauge.builder("sluice.cluster.breaker.open", b.retries(), x -> x.open() ? 1 : 0)
                .tags("cluster", name, "resource", "retries").description("1 while the limit refuses").register(registry));
        out.add(FunctionCounter.builder("sluice.cluster.breaker.overflows", b.retries(), Limit::overflows)
                .tags("cluster", name, "resource", "retries").description("Attempts refused by the limit").register(registry));
        retries(registry, out, name, "retried", p.retries);
        retries(registry, out, name, "success", p.retrySuccess);
        retries(registry, out, name, "overflow", p.retryOverflow);
        retries(registry, out, name, "limit_exceeded", p.retryLimitExceeded);
        retries(registry, out, name, "body_too_large", p.bodyTooLarge);
        out.add(FunctionCounter.builder("sluice.cluster.breaker.overflows", p.hostOverflow, LongAdder::sum)
                .tags("cluster", name, "resource", "host_requests")
                .description("Attempts refused by the limit").register(registry));
        return out;
    }

    private static void limit(MeterRegistry registry, List<Meter> out, String cluster, String resource, Limit l) {
        out.add(Gauge.builder("sluice.cluster.breaker.remaining", l, Limit::remaining)
                .tags("cluster", cluster, "resource", resource)
                .description("What the circuit breaker still admits").register(registry));
        out.add(Gauge.builder("sluice.cluster.breaker.open", l, x -> x.open() ? 1 : 0)
                .tags("cluster", cluster, "resource", resource).description("1 while the limit refuses").register(registry));
        out.add(FunctionCounter.builder("sluice.cluster.breaker.overflows", l, Limit::overflows)
                .tags("cluster", cluster, "resource", resource).description("Attempts refused by the limit").register(registry));
    }

    private static void retries(MeterRegistry registry, List<Meter> out, String cluster, String outcome, LongAdder a) {
        out.add(FunctionCounter.builder("sluice.cluster.retries", a, LongAdder::sum)
                .tags("cluster", cluster, "outcome", outcome)
                .description("Retries: sent, succeeded after, refused by the budget, out of attempts, body too large")
                .register(registry));
    }
}
