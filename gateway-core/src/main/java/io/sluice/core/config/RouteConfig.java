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
 * @param timeout       HTTP: upstream response timeout for this route (null = the cluster's); with a
 *                      retry policy it bounds the whole request, retries and back-off included
 * @param retryPolicy   retries on this route (null = the cluster's {@code retry_policy}, if any)
 */
public record RouteConfig(String name, RouteMatch match, String cluster, String prefixRewrite, Duration timeout,
                          RetryPolicyConfig retryPolicy) {

    public RouteConfig {
        match = match == null ? RouteMatch.ANY : match;
        Checks.notBlank("cluster", cluster);
        if (timeout != null) {
            Checks.positive("timeout", timeout);
        }
        if (prefixRewrite != null && (match.path() == null || match.path().kind() != StringMatch.Kind.PREFIX)) {
            throw new ConfigException("prefix_rewrite", prefixRewrite, "to be used only with a \"prefix\" path match");
        }
    }

    /** Without a retry policy of its own. */
    public RouteConfig(String name, RouteMatch match, String cluster, String prefixRewrite, Duration timeout) {
        this(name, match, cluster, prefixRewrite, timeout, null);
    }

    public RouteConfig withRetryPolicy(RetryPolicyConfig policy) {
        return new RouteConfig(name, match, cluster, prefixRewrite, timeout, policy);
    }

    public RouteConfig withTimeout(Duration t) {
        return new RouteConfig(name, match, cluster, prefixRewrite, t, retryPolicy);
    }

    public static RouteConfig to(String cluster) {
        return new RouteConfig(null, RouteMatch.ANY, cluster, null, null);
    }
}
