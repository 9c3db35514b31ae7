package io.sluice.server.policy;

import io.sluice.core.config.ClusterConfig;
import io.sluice.lb.ClusterBalancer;
import io.sluice.server.policy.breaker.CircuitBreaker;
import io.sluice.server.policy.retry.RetryPolicy;

import java.util.Collections;
import java.util.Map;
import java.util.WeakHashMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * The resilience state of one cluster: its {@link CircuitBreaker} (limits and retry budget) and
 * the retry counters. One instance per {@link ClusterBalancer}, found with {@link #of} when routes
 * are compiled (never per request), so it lives as long as the balancer: a reload that keeps the
 * cluster keeps the counts of requests and retries in flight and only changes the limits.
 */
public final class ClusterPolicies {

    private static final Map<ClusterBalancer, ClusterPolicies> BY_CLUSTER =
            Collections.synchronizedMap(new WeakHashMap<>());

    private final String cluster;
    private final CircuitBreaker breaker;
    private volatile RetryPolicy clusterRetryPolicy;
    /** Retries sent. */
    public final LongAdder retries = new LongAdder();
    /** Requests that succeeded after at least one retry. */
    public final LongAdder retrySuccess = new LongAdder();
    /** Retries refused by the budget. */
    public final LongAdder retryOverflow = new LongAdder();
    /** Requests that failed after all their retries. */
    public final LongAdder retryLimitExceeded = new LongAdder();
    /** Requests not retried because their body exceeded the replay buffer. */
    public final LongAdder bodyTooLarge = new LongAdder();
    /** Requests refused because every host tried was at its per-host limit. */
    public final LongAdder hostOverflow = new LongAdder();

    private ClusterPolicies(String cluster, ClusterConfig config) {
        this.cluster = cluster;
        this.breaker = new CircuitBreaker(cluster, config.circuitBreakers());
    }

    /** The cluster's policies (created on first use), with its current config's limits applied. */
    public static ClusterPolicies of(ClusterBalancer c) {
        ClusterPolicies p;
        synchronized (BY_CLUSTER) {
            p = BY_CLUSTER.computeIfAbsent(c, b -> new ClusterPolicies(b.name(), b.config()));
        }
        p.breaker.configure(c.config().circuitBreakers());
        p.clusterRetryPolicy = RetryPolicy.of(c.config().retryPolicy());
        return p;
    }

    /** The cluster's own retry policy (for requests without a route, e.g. a Bolt listener's default cluster), or null. */
    public RetryPolicy clusterRetryPolicy() {
        return clusterRetryPolicy;
    }

    public String cluster() {
        return cluster;
    }

    public CircuitBreaker breaker() {
        return breaker;
    }

}
