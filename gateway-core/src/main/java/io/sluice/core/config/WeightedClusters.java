package io.sluice.core.config;

import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * A route's traffic split among clusters ({@code weighted_clusters}). Requests are spread by a
 * deterministic smooth weighted schedule: over any {@code total / gcd} consecutive requests each
 * cluster gets exactly its share. With {@code sticky} the route's {@code hash_policy} key chooses
 * the side instead, so one client key always lands on one side (and keeps its side while a canary's
 * share only grows).
 *
 * @param clusters the sides, names unique, at least one with a weight > 0, total weight at most 10 000
 * @param sticky   true = the route's hash key chooses the side (the route needs a {@code hash_policy})
 */
public record WeightedClusters(List<WeightedCluster> clusters, boolean sticky) {

    /** Largest sum of weights (0.01 % granularity). */
    public static final int MAX_TOTAL_WEIGHT = 10_000;

    public WeightedClusters {
        clusters = Checks.list(clusters);
        if (clusters.isEmpty()) {
            throw new ConfigException("clusters", "[]", "at least one {\"name\", \"weight\"}");
        }
        Set<String> seen = new HashSet<>();
        long total = 0;
        for (int i = 0; i < clusters.size(); i++) {
            WeightedCluster c = clusters.get(i);
            if (!seen.add(c.name())) {
                throw new ConfigException("clusters[" + i + "].name", c.name(), "a cluster not listed twice in the split");
            }
            total += c.weight();
        }
        if (total <= 0 || total > MAX_TOTAL_WEIGHT) {
            throw new ConfigException("clusters", "total weight " + total,
                    "weights summing to between 1 and " + MAX_TOTAL_WEIGHT);
        }
    }

    public int totalWeight() {
        int t = 0;
        for (WeightedCluster c : clusters) {
            t += c.weight();
        }
        return t;
    }
}
