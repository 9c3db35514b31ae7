package io.sluice.server.route;

import io.sluice.core.config.RouteConfig;
import io.sluice.core.config.StringMatch;
import io.sluice.lb.ClusterBalancer;
import io.sluice.server.metrics.ListenerMetrics.RouteMeters;
import io.sluice.server.policy.ClusterPolicies;
import io.sluice.server.policy.retry.RetryPolicy;

/** A compiled route: its rule, the cluster it sends to, and the pre-computed bits the proxy needs per request. */
public final class Route {

    private final String name;
    private final RouteConfig config;
    private final ClusterBalancer cluster;
    private final long timeoutNanos;
    /** Weighted clusters, hash key, mirrors; null when the route has none (the common case: one null check). */
    private final RouteTraffic traffic;
    // ---- resilience (policy package): the route's retry policy (or its cluster's), the cluster's breakers
    private final RetryPolicy retryPolicy;
    private final ClusterPolicies policies;
    /** With weighted clusters: the policies of each side, aligned with {@code traffic.sides()}. */
    private final ClusterPolicies[] sidePolicies;
    /** The route's meters, set before its table is published. */
    private RouteMeters meters;
    /** The rate-limit rules applying to this route (null: none), set before its table is published. */
    private io.sluice.server.policy.ratelimit.RouteLimits rateLimits;

    Route(String name, RouteConfig config, ClusterBalancer cluster, RouteTraffic traffic) {
        this.traffic = traffic;
        this.name = name;
        this.config = config;
        this.cluster = cluster;
        this.timeoutNanos = (config.timeout() != null ? config.timeout() : cluster.config().responseTimeout()).toNanos();
        this.retryPolicy = RetryPolicy.of(config.retryPolicy() != null ? config.retryPolicy() : cluster.config().retryPolicy());
        this.policies = ClusterPolicies.of(cluster);
        ClusterBalancer[] sides = traffic == null ? null : traffic.sides();
        if (sides == null) {
            this.sidePolicies = null;
        } else {
            this.sidePolicies = new ClusterPolicies[sides.length];
            for (int i = 0; i < sides.length; i++) {
                sidePolicies[i] = ClusterPolicies.of(sides[i]);
            }
        }
    }

    /** The breakers and retry counters of {@code c}: the route's cluster or one side of its weighted split. */
    public ClusterPolicies policiesFor(ClusterBalancer c) {
        if (c == cluster || sidePolicies == null) {
            return policies;
        }
        ClusterBalancer[] sides = traffic.sides();
        for (int i = 0; i < sides.length; i++) {
            if (sides[i] == c) {
                return sidePolicies[i];
            }
        }
        return policies;
    }

    /** The retry policy of requests on this route (its own, else its cluster's), or null: no retries. */
    public RetryPolicy retryPolicy() {
        return retryPolicy;
    }

    /** The circuit breakers and retry counters of the route's cluster. */
    public ClusterPolicies policies() {
        return policies;
    }

    public String name() {
        return name;
    }

    public RouteConfig config() {
        return config;
    }

    public ClusterBalancer cluster() {
        return cluster;
    }

    /** The route's traffic rules (weighted clusters, hash key, mirrors), or null when it has none. */
    public RouteTraffic traffic() {
        return traffic;
    }

    /** The meters requests on this route record into (null until attached). */
    public RouteMeters meters() {
        return meters;
    }

    /** Attaches the route's meters; before the route table is published. */
    public void meters(RouteMeters m) {
        this.meters = m;
    }

    /** The rate-limit rules of this route, or null (then requests pay this null check only). */
    public io.sluice.server.policy.ratelimit.RouteLimits rateLimits() {
        return rateLimits;
    }

    /** Attaches the route's rate limits; before the route table is published. */
    public void rateLimits(io.sluice.server.policy.ratelimit.RouteLimits r) {
        this.rateLimits = r;
    }

    /** Upstream response timeout for requests on this route. */
    public long timeoutNanos() {
        return timeoutNanos;
    }

    /** Whether {@link #rewrite} can change a target. */
    public boolean rewrites() {
        return config.prefixRewrite() != null;
    }

    /** Applies the route's prefix rewrite to {@code uri} (path plus query), or returns it unchanged. */
    public String rewrite(String uri) {
        String replacement = config.prefixRewrite();
        if (replacement == null) {
            return uri;
        }
        StringMatch prefix = config.match().path();
        String rest = uri.substring(prefix.value().length());
        if (replacement.endsWith("/") && rest.startsWith("/")) {
            rest = rest.substring(1);
        }
        String out = replacement + rest;
        return out.isEmpty() || out.charAt(0) != '/' ? "/" + out : out;
    }
}
