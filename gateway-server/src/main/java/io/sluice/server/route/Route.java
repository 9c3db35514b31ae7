package io.sluice.server.route;

import io.sluice.core.cluster.Host;
import io.sluice.core.config.ClusterConfig;
import io.sluice.core.config.RouteConfig;
import io.sluice.core.config.StringMatch;
import io.sluice.core.config.RouteRules;
import io.sluice.lb.ClusterBalancer;
import io.sluice.server.http.rules.HeaderRuleSet;
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
    // ---- route rules: upgrades, header rules, rewrites, local answers (never null)
    private final RouteRules rules;
    private final long tunnelIdleNanos;
    private final HeaderRuleSet requestRules;
    private final HeaderRuleSet responseRules;
    /** With weighted clusters: the header rules of each side (its cluster's, then the route's), aligned with {@code traffic.sides()}. */
    private final HeaderRuleSet[] sideRequestRules;
    private final HeaderRuleSet[] sideResponseRules;
    private final java.util.regex.Pattern regex;
    /** The route's meters, set before its table is published. */
    private RouteMeters meters;
    /** The rate-limit rules applying to this route (null: none), set before its table is published. */
    private io.sluice.server.policy.ratelimit.RouteLimits rateLimits;

    Route(String name, RouteConfig config, ClusterBalancer cluster, RouteTraffic traffic) {
        this.traffic = traffic;
        this.name = name;
        this.config = config;
        this.cluster = cluster;
        this.timeoutNanos = config.timeout() != null ? config.timeout().toNanos()
                : cluster != null ? cluster.config().responseTimeout().toNanos() : Long.MAX_VALUE;
        this.rules = config.rulesOrDefault();
        this.tunnelIdleNanos = rules.tunnelIdleTimeout().toNanos();
        ClusterConfig.ClusterHeaders ch = cluster == null ? null : cluster.config().headers();
        this.requestRules = HeaderRuleSet.compile(ch == null ? null : ch.request(), rules.requestHeaders());
        this.responseRules = HeaderRuleSet.compile(ch == null ? null : ch.response(), rules.responseHeaders());
        this.regex = rules.regexRewrite() == null ? null : rules.regexRewrite().compiled();
        // a route answering by itself (redirect, direct response) has no cluster: no timeout, retries or breakers
        this.retryPolicy = cluster == null ? null
                : RetryPolicy.of(config.retryPolicy() != null ? config.retryPolicy() : cluster.config().retryPolicy());
        this.policies = cluster == null ? null : ClusterPolicies.of(cluster);
        ClusterBalancer[] sides = traffic == null ? null : traffic.sides();
        if (sides == null) {
            this.sidePolicies = null;
            this.sideRequestRules = null;
            this.sideResponseRules = null;
        } else {
            this.sidePolicies = new ClusterPolicies[sides.length];
            this.sideRequestRules = new HeaderRuleSet[sides.length];
            this.sideResponseRules = new HeaderRuleSet[sides.length];
            for (int i = 0; i < sides.length; i++) {
                sidePolicies[i] = ClusterPolicies.of(sides[i]);
                ClusterConfig.ClusterHeaders sh = sides[i].config().headers();
                sideRequestRules[i] = HeaderRuleSet.compile(sh == null ? null : sh.request(), rules.requestHeaders());
                sideResponseRules[i] = HeaderRuleSet.compile(sh == null ? null : sh.response(), rules.responseHeaders());
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

    /** The request header rules (the route cluster's, then the route's), or null when there are none. */
    public HeaderRuleSet requestRules() {
        return requestRules;
    }

    /** The response header rules (the route cluster's, then the route's), or null when there are none. */
    public HeaderRuleSet responseRules() {
        return responseRules;
    }

    /** The request header rules for a request sent to {@code c} (a side of a weighted split: that cluster's rules). */
    public HeaderRuleSet requestRules(ClusterBalancer c) {
        int i = sideIndex(c);
        return i < 0 ? requestRules : sideRequestRules[i];
    }

    /** The response header rules for a response from {@code c}. */
    public HeaderRuleSet responseRules(ClusterBalancer c) {
        int i = sideIndex(c);
        return i < 0 ? responseRules : sideResponseRules[i];
    }

    private int sideIndex(ClusterBalancer c) {
        if (c == cluster || sideRequestRules == null) {
            return -1;
        }
        ClusterBalancer[] sides = traffic.sides();
        for (int i = 0; i < sides.length; i++) {
            if (sides[i] == c) {
                return i;
            }
        }
        return -1;
    }

    /**
     * The Host to send upstream instead of the client's: the route's literal {@code host_rewrite},
     * or {@code host}'s address with {@code host_rewrite_to_upstream}; else {@code otherwise}.
     */
    public String hostFor(Host host, String otherwise) {
        if (rules.hostRewrite() != null) {
            return rules.hostRewrite();
        }
        return rules.hostRewriteToUpstream() ? host.address() : otherwise;
    }

    /** The route rules: upgrades, header rules, rewrites, local answers ({@link RouteRules#DEFAULT} if none). */
    public RouteRules rules() {
        return rules;
    }

    /** Whether an {@code Upgrade} to {@code type} (lower case) is tunnelled on this route. */
    public boolean allowsUpgrade(String type) {
        return rules.allowsUpgrade(type);
    }

    /** How long an upgraded connection on this route may see no byte either way. */
    public long tunnelIdleNanos() {
        return tunnelIdleNanos;
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
        return config.prefixRewrite() != null || regex != null;
    }

    /**
     * Applies the route's prefix rewrite, or its regex rewrite (every match in the path replaced,
     * the query kept), to {@code uri} (path plus query), or returns it unchanged.
     */
    public String rewrite(String uri) {
        if (regex != null) {
            int q = uri.indexOf('?');
            String path = q < 0 ? uri : uri.substring(0, q);
            String out = regex.matcher(path).replaceAll(rules.regexRewrite().substitution());
            if (out.isEmpty() || out.charAt(0) != '/') {
                out = "/" + out;
            }
            return q < 0 ? out : out + uri.substring(q);
        }
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
