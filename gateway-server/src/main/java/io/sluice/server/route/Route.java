package io.sluice.server.route;

import io.sluice.core.cluster.Host;
import io.sluice.core.config.ClusterConfig;
import io.sluice.core.config.RouteConfig;
import io.sluice.core.config.StringMatch;
import io.sluice.core.config.TrafficPolicy;
import io.sluice.lb.ClusterBalancer;
import io.sluice.server.http.rules.HeaderRuleSet;
import io.sluice.server.metrics.ListenerMetrics.RouteMeters;

/** A compiled route: its rule, the cluster it sends to, and the pre-computed bits the proxy needs per request. */
public final class Route {

    private final String name;
    private final RouteConfig config;
    private final ClusterBalancer cluster;
    private final long timeoutNanos;
    /** The route's traffic policy (never null). */
    private final TrafficPolicy traffic;
    private final long tunnelIdleNanos;
    private final HeaderRuleSet requestRules;
    private final HeaderRuleSet responseRules;
    private final java.util.regex.Pattern regex;
    /** The route's meters, set before its table is published. */
    private RouteMeters meters;

    Route(String name, RouteConfig config, ClusterBalancer cluster) {
        this.name = name;
        this.config = config;
        this.cluster = cluster;
        this.timeoutNanos = config.timeout() != null ? config.timeout().toNanos()
                : cluster != null ? cluster.config().responseTimeout().toNanos() : Long.MAX_VALUE;
        this.traffic = config.trafficOrDefault();
        this.tunnelIdleNanos = traffic.tunnelIdleTimeout().toNanos();
        ClusterConfig.ClusterHeaders ch = cluster == null ? null : cluster.config().headers();
        this.requestRules = HeaderRuleSet.compile(ch == null ? null : ch.request(), traffic.requestHeaders());
        this.responseRules = HeaderRuleSet.compile(ch == null ? null : ch.response(), traffic.responseHeaders());
        this.regex = traffic.regexRewrite() == null ? null : traffic.regexRewrite().compiled();
    }

    /** The request header rules, or null when there are none. */
    public HeaderRuleSet requestRules() {
        return requestRules;
    }

    /** The response header rules, or null when there are none. */
    public HeaderRuleSet responseRules() {
        return responseRules;
    }

    /**
     * The Host to send upstream instead of the client's: the route's literal {@code host_rewrite},
     * or {@code host}'s address with {@code host_rewrite_to_upstream}; else {@code otherwise}.
     */
    public String hostFor(Host host, String otherwise) {
        if (traffic.hostRewrite() != null) {
            return traffic.hostRewrite();
        }
        return traffic.hostRewriteToUpstream() ? host.address() : otherwise;
    }

    /** The traffic policy: upgrades, header rules, rewrites, local answers ({@link TrafficPolicy#DEFAULT} if none). */
    public TrafficPolicy traffic() {
        return traffic;
    }

    /** Whether an {@code Upgrade} to {@code type} (lower case) is tunnelled on this route. */
    public boolean allowsUpgrade(String type) {
        return traffic.allowsUpgrade(type);
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

    /** The meters requests on this route record into (null until attached). */
    public RouteMeters meters() {
        return meters;
    }

    /** Attaches the route's meters; before the route table is published. */
    public void meters(RouteMeters m) {
        this.meters = m;
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
            String out = regex.matcher(path).replaceAll(traffic.regexRewrite().substitution());
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
