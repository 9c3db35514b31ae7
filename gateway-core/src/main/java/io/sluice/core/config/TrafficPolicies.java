package io.sluice.core.config;

import java.util.List;
import java.util.Map;

/** Cross-checks of a route's {@link TrafficPolicy} against the clusters (names exist, protocols agree). */
final class TrafficPolicies {

    private TrafficPolicies() {
    }

    /** {@code at} is the route's JSON path. */
    static void check(String at, RouteConfig route, Map<String, ClusterConfig> byName) {
        TrafficPolicy t = route.traffic();
        if (t == null) {
            return;
        }
        ClusterConfig first = byName.get(route.cluster());
        Protocol protocol = first == null ? null : first.protocol();
        if (t.weightedClusters() != null) {
            List<WeightedCluster> cs = t.weightedClusters().clusters();
            for (int i = 0; i < cs.size(); i++) {
                String path = at + ".weighted_clusters.clusters[" + i + "].name";
                ClusterConfig c = byName.get(cs.get(i).name());
                if (c == null) {
                    throw new ConfigException(path, cs.get(i).name(), "one of the cluster names " + byName.keySet());
                }
                if (c.protocol() != protocol) {
                    throw new ConfigException(path, cs.get(i).name(), "a cluster speaking " + protocol.jsonName()
                            + " like the split's first cluster (it speaks " + c.protocol().jsonName() + ")");
                }
            }
        }
        List<MirrorPolicy> ms = t.mirrors();
        for (int i = 0; i < ms.size(); i++) {
            String path = at + ".mirrors[" + i + "].cluster";
            ClusterConfig c = byName.get(ms.get(i).cluster());
            if (c == null) {
                throw new ConfigException(path, ms.get(i).cluster(), "one of the cluster names " + byName.keySet());
            }
            if (c.protocol() != Protocol.HTTP || protocol != Protocol.HTTP) {
                throw new ConfigException(path, ms.get(i).cluster(), "an HTTP cluster on an HTTP route (only HTTP requests are mirrored)");
            }
        }
        for (int i = 0; i < t.hashPolicy().size(); i++) {
            HashPolicy h = t.hashPolicy().get(i);
            if (h.kind() == HashPolicy.Kind.COOKIE && protocol == Protocol.BOLT) {
                throw new ConfigException(at + ".hash_policy[" + i + "]", "cookie", "header, client_address or service on a Bolt route");
            }
            if (h.kind() == HashPolicy.Kind.SERVICE && protocol == Protocol.HTTP) {
                throw new ConfigException(at + ".hash_policy[" + i + "]", "service", "header, cookie or client_address on an HTTP route");
            }
        }
    }
}
