package io.sluice.core.config;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * A routing rule: requests matching {@code match} go to {@code cluster}. Rules are tried in order;
 * the first match wins.
 *
 * @param name          optional name, used in metrics and logs (defaults to its index)
 * @param match         the condition
 * @param cluster       target cluster name; null on a route that answers by itself (redirect,
 *                      direct response)
 * @param prefixRewrite HTTP: replace the matched path prefix with this (only with a prefix path match)
 * @param timeout       HTTP: upstream response timeout for this route (null = the cluster's; with
 *                      weighted clusters, the first one's); with a retry policy it bounds the whole
 *                      request, retries and back-off included
 * @param traffic       weighted clusters, hash key, mirrors (null = none); with weighted clusters
 *                      {@code cluster} is null (or the first of them) and becomes the first of them
 * @param retryPolicy   retries on this route (null = the cluster's {@code retry_policy}, if any)
 * @param rules         HTTP: upgrades, header rules, rewrites, redirect or direct response (null:
 *                      {@link RouteRules#DEFAULT}); a route that answers by itself (redirect, direct
 *                      response) has no cluster, no weighted clusters, mirrors nor retry policy
 */
public record RouteConfig(String name, RouteMatch match, String cluster, String prefixRewrite, Duration timeout,
                          TrafficPolicy traffic, RetryPolicyConfig retryPolicy, RouteRules rules) {

    /** A route without traffic rules, a retry policy of its own, or route rules. */
    public RouteConfig(String name, RouteMatch match, String cluster, String prefixRewrite, Duration timeout) {
        this(name, match, cluster, prefixRewrite, timeout, null, null, null);
    }

    public RouteConfig {
        match = match == null ? RouteMatch.ANY : match;
        if (rules != null && rules.answersLocally()) {
            if (cluster != null) {
                throw new ConfigException("cluster", cluster, "no cluster on a route with a redirect or direct_response");
            }
            if (traffic != null) {
                throw new ConfigException("weighted_clusters", "set", "no weighted_clusters, hash_policy or mirrors"
                        + " on a route with a redirect or direct_response");
            }
            if (retryPolicy != null) {
                throw new ConfigException("retry_policy", "set", "no retry_policy on a route with a redirect or direct_response");
            }
        } else {
            WeightedClusters wc = traffic == null ? null : traffic.weightedClusters();
            if (wc != null) {
                if (cluster != null && !cluster.equals(wc.clusters().get(0).name())) {
                    throw new ConfigException("cluster", cluster, "no \"cluster\" next to \"weighted_clusters\" (one or the other)");
                }
                cluster = wc.clusters().get(0).name();
            }
            Checks.notBlank("cluster", cluster);
        }
        if (timeout != null) {
            Checks.positive("timeout", timeout);
        }
        if (prefixRewrite != null && (match.path() == null || match.path().kind() != StringMatch.Kind.PREFIX)) {
            throw new ConfigException("prefix_rewrite", prefixRewrite, "to be used only with a \"prefix\" path match");
        }
        if (prefixRewrite != null && rules != null && rules.regexRewrite() != null) {
            throw new ConfigException("regex_rewrite", rules.regexRewrite().pattern(), "no regex_rewrite with prefix_rewrite (one or the other)");
        }
    }

    /** Whether this route answers by itself (redirect, direct response) and so uses no cluster. */
    public boolean answersLocally() {
        return rules != null && rules.answersLocally();
    }

    /**
     * Every cluster this route may send requests to: its cluster or weighted clusters, then its
     * mirrors. Empty for a route that answers by itself.
     */
    public List<String> clustersUsed() {
        List<String> out = new ArrayList<>();
        if (cluster == null) {
            return out;
        }
        if (traffic != null && traffic.weightedClusters() != null) {
            traffic.weightedClusters().clusters().forEach(c -> out.add(c.name()));
        } else {
            out.add(cluster);
        }
        if (traffic != null) {
            traffic.mirrors().forEach(m -> out.add(m.cluster()));
        }
        return out;
    }

    public RouteConfig withRetryPolicy(RetryPolicyConfig policy) {
        return new RouteConfig(name, match, cluster, prefixRewrite, timeout, traffic, policy, rules);
    }

    public RouteConfig withTimeout(Duration t) {
        return new RouteConfig(name, match, cluster, prefixRewrite, t, traffic, retryPolicy, rules);
    }

    public RouteConfig withTraffic(TrafficPolicy t) {
        return new RouteConfig(name, match, cluster, prefixRewrite, timeout, t, retryPolicy, rules);
    }

    public RouteConfig withRules(RouteRules r) {
        return new RouteConfig(name, match, cluster, prefixRewrite, timeout, traffic, retryPolicy, r);
    }

    public static RouteConfig to(String cluster) {
        return new RouteConfig(null, RouteMatch.ANY, cluster, null, null);
    }

    /** The route rules in effect ({@link RouteRules#DEFAULT} when none are set). */
    public RouteRules rulesOrDefault() {
        return rules == null ? RouteRules.DEFAULT : rules;
    }
}
