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
 */
public record RouteConfig(String name, RouteMatch match, String cluster, String prefixRewrite, Duration timeout) {

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

    public static RouteConfig to(String cluster) {
        return new RouteConfig(null, RouteMatch.ANY, cluster, null, null);
    }
}
