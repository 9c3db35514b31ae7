package io.sluice.core.config;

import java.time.Duration;

/**
 * A routing rule: requests matching {@code match} go to {@code cluster}. Rules are tried in order;
 * the first match wins.
 *
 * @param name          optional name, used in metrics and logs (defaults to its index)
 * @param match         the condition
 * @param cluster       target cluster name
 * @param prefixRewrite HTTP: replace the matched path prefix with this (only with a prefix path match)
 * @param timeout       HTTP: upstream response timeout for this route (null = the cluster's)
 * @param traffic       HTTP: upgrades, header rules, rewrites, redirect or direct response (null: {@link TrafficPolicy#DEFAULT});
 *                      a route that answers by itself (redirect, direct response) has no cluster
 */
public record RouteConfig(String name, RouteMatch match, String cluster, String prefixRewrite, Duration timeout,
                          TrafficPolicy traffic) {

    public RouteConfig {
        match = match == null ? RouteMatch.ANY : match;
        if (traffic == null || !traffic.answersLocally()) {
            Checks.notBlank("cluster", cluster);
        } else if (cluster != null) {
            throw new ConfigException("cluster", cluster, "no cluster on a route with a redirect or direct_response");
        }
        if (prefixRewrite != null && traffic != null && traffic.regexRewrite() != null) {
            throw new ConfigException("regex_rewrite", traffic.regexRewrite().pattern(), "no regex_rewrite with prefix_rewrite (one or the other)");
        }
        if (timeout != null) {
            Checks.positive("timeout", timeout);
        }
        if (prefixRewrite != null && (match.path() == null || match.path().kind() != StringMatch.Kind.PREFIX)) {
            throw new ConfigException("prefix_rewrite", prefixRewrite, "to be used only with a \"prefix\" path match");
        }
    }

    /** A route without a {@link TrafficPolicy}. */
    public RouteConfig(String name, RouteMatch match, String cluster, String prefixRewrite, Duration timeout) {
        this(name, match, cluster, prefixRewrite, timeout, null);
    }

    public static RouteConfig to(String cluster) {
        return new RouteConfig(null, RouteMatch.ANY, cluster, null, null);
    }

    /** The traffic policy in effect ({@link TrafficPolicy#DEFAULT} when none is set). */
    public TrafficPolicy trafficOrDefault() {
        return traffic == null ? TrafficPolicy.DEFAULT : traffic;
    }

    public RouteConfig withTraffic(TrafficPolicy t) {
        return new RouteConfig(name, match, cluster, prefixRewrite, timeout, t);
    }
}
