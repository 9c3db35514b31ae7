package io.sluice.core.config;

/**
 * One side of a traffic split: a cluster and its share.
 *
 * @param name   the cluster
 * @param weight its share, an integer >= 0 (0 = no traffic, e.g. the old side after a canary finished)
 */
public record WeightedCluster(String name, int weight) {

    public WeightedCluster {
        Checks.notBlank("name", name);
        Checks.range("weight", weight, 0, WeightedClusters.MAX_TOTAL_WEIGHT);
    }
}
