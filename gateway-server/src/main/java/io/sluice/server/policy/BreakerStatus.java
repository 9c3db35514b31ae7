package io.sluice.server.policy;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.sluice.lb.ClusterBalancer;
import io.sluice.server.policy.breaker.CircuitBreaker;
import io.sluice.server.policy.breaker.Limit;

/** A cluster's breaker state for the admin endpoints ({@code /clusters} and the status page). */
public final class BreakerStatus {

    private BreakerStatus() {
    }

    /**
     * Adds {@code "circuit_breakers": {"requests": {"max", "active", "remaining", "open", "overflows"}, ...}}
     * and {@code "retries": {...counters}} to a cluster's JSON object.
     */
    public static void json(ObjectNode cluster, ClusterBalancer c) {
        ClusterPolicies p = ClusterPolicies.of(c);
        CircuitBreaker b = p.breaker();
        ObjectNode o = cluster.putObject("circuit_breakers");
        limit(o.putObject("connections"), b.connections(), b.connections().max());
        limit(o.putObject("pending"), b.pending(), b.pending().max());
        limit(o.putObject("requests"), b.requests(), b.requests().max());
        limit(o.putObject("retries"), b.retries(), b.retryLimit());
        o.put("max_host_requests", b.config().maxHostRequests());
        cluster.putObject("retries").put("retried", p.retries.sum()).put("success", p.retrySuccess.sum())
                .put("overflow", p.retryOverflow.sum()).put("limit_exceeded", p.retryLimitExceeded.sum())
                .put("body_too_large", p.bodyTooLarge.sum());
    }

    private static void limit(ObjectNode o, Limit l, int max) {
        int active = l.count();
        o.put("max", max).put("active", active).put("remaining", Math.max(0, max - active)).put("open", l.open())
                .put("overflows", l.overflows());
    }

    /** One line of HTML-safe text: what each breaker still admits, and which are open. */
    public static String line(ClusterBalancer c) {
        CircuitBreaker b = ClusterPolicies.of(c).breaker();
        StringBuilder sb = new StringBuilder("breakers: ");
        text(sb, "connections", b.connections(), b.connections().max());
        text(sb.append(", "), "pending", b.pending(), b.pending().max());
        text(sb.append(", "), "requests", b.requests(), b.requests().max());
        text(sb.append(", "), "retries", b.retries(), b.retryLimit());
        return sb.toString();
    }

    private static void text(StringBuilder sb, String name, Limit l, int max) {
        sb.append(name).append(' ').append(Math.max(0, max - l.count())).append('/').append(max).append(" left");
        if (l.open()) {
            sb.append(" (OPEN)");
        }
    }
}
