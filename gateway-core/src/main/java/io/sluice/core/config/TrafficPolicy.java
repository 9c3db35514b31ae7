package io.sluice.core.config;

import java.util.List;

/**
 * A route's traffic management: a weighted split among clusters, the hash key for hash balancing
 * and sticky splits, and request mirrors. Null on a route that uses none of them.
 *
 * @param weightedClusters the split, or null (the route's {@code cluster} takes everything)
 * @param hashPolicy       where the hash key comes from, tried in order (empty = none)
 * @param mirrors          shadow copies of requests (empty = none)
 */
public record TrafficPolicy(WeightedClusters weightedClusters, List<HashPolicy> hashPolicy, List<MirrorPolicy> mirrors) {

    public TrafficPolicy {
        hashPolicy = Checks.list(hashPolicy);
        mirrors = Checks.list(mirrors);
        if (weightedClusters != null && weightedClusters.sticky() && hashPolicy.isEmpty()) {
            throw new ConfigException("weighted_clusters.sticky", true, "false, or a \"hash_policy\" on the route"
                    + " (the key that keeps a client on one side)");
        }
    }

    /** Null when nothing is configured, so a route without traffic rules keeps a null. */
    public static TrafficPolicy of(WeightedClusters weighted, List<HashPolicy> hash, List<MirrorPolicy> mirrors) {
        if (weighted == null && (hash == null || hash.isEmpty()) && (mirrors == null || mirrors.isEmpty())) {
            return null;
        }
        return new TrafficPolicy(weighted, hash, mirrors);
    }
}
