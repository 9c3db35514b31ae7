package io.sluice.server.config;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.sluice.core.config.ClusterConfig;
import io.sluice.core.config.ConfigException;
import io.sluice.core.config.DurationFormat;
import io.sluice.core.config.GatewayConfig;
import io.sluice.core.config.HashLbConfig;
import io.sluice.core.config.HashPolicy;
import io.sluice.core.config.ListenerConfig;
import io.sluice.core.config.MirrorPolicy;
import io.sluice.core.config.RouteConfig;
import io.sluice.core.config.TrafficPolicy;
import io.sluice.core.config.WeightedCluster;
import io.sluice.core.config.WeightedClusters;

import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import static io.sluice.server.config.ConfigLoader.build;

/**
 * The native JSON of traffic management (docs/traffic.md): a route's {@code weighted_clusters},
 * {@code hash_policy} and {@code mirrors}, and a cluster's {@code ring_hash} / {@code maglev} sizes.
 */
final class TrafficJson {

    private TrafficJson() {
    }

    /** Reads the route keys of traffic management from {@code route}; null when it has none. */
    static TrafficPolicy route(JsonObject route) {
        WeightedClusters weighted = weightedClusters(route.object("weighted_clusters"));
        List<HashPolicy> hash = route.array("hash_policy", (n, p) -> hashPolicy(JsonObject.of(n, p)));
        List<MirrorPolicy> mirrors = route.array("mirrors", (n, p) -> mirror(JsonObject.of(n, p)));
        return build(route.path(), () -> TrafficPolicy.of(weighted, hash, mirrors));
    }

    /** {@code {"clusters": [{"name": "a", "weight": 90}, ...], "sticky": false}}. */
    static WeightedClusters weightedClusters(JsonObject o) {
        if (o == null) {
            return null;
        }
        List<WeightedCluster> clusters = o.array("clusters", (n, p) -> {
            JsonObject c = JsonObject.of(n, p);
            String name = c.requiredString("name");
            int weight = c.integer("weight", -1);
            if (weight < 0) {
                throw new ConfigException(c.at("weight"), c.has("weight") ? weight : null,
                        "a whole number in [0, " + WeightedClusters.MAX_TOTAL_WEIGHT + "]");
            }
            c.finish();
            return build(p, () -> new WeightedCluster(name, weight));
        });
        boolean sticky = o.bool("sticky", false);
        o.finish();
        return build(o.path(), () -> new WeightedClusters(clusters, sticky));
    }

    /** {@code {"header": "x-user"}}, {@code {"cookie": "sid"}}, {@code {"client_address": true}} or {@code {"service": true}}. */
    static HashPolicy hashPolicy(JsonObject o) {
        String header = o.string("header", null);
        String cookie = o.string("cookie", null);
        boolean client = o.bool("client_address", false);
        boolean service = o.bool("service", false);
        o.finish();
        int given = (header != null ? 1 : 0) + (cookie != null ? 1 : 0) + (client ? 1 : 0) + (service ? 1 : 0);
        if (given != 1) {
            throw new ConfigException(o.path(), given == 0 ? "{}" : "several sources",
                    "exactly one of {\"header\": name}, {\"cookie\": name}, {\"client_address\": true}, {\"service\": true}");
        }
        HashPolicy.Kind kind = header != null ? HashPolicy.Kind.HEADER : cookie != null ? HashPolicy.Kind.COOKIE
                : client ? HashPolicy.Kind.CLIENT_ADDRESS : HashPolicy.Kind.SERVICE;
        String name = header != null ? header : cookie;
        return build(o.path(), () -> new HashPolicy(kind, name));
    }

    /** {@code {"cluster": "shadow", "percent": 10, "max_body_bytes": "64KiB", "max_concurrent": 32, "timeout": "2s"}}. */
    static MirrorPolicy mirror(JsonObject o) {
        String cluster = o.requiredString("cluster");
        double percent = o.number("percent", 100);
        long maxBody = o.bytes("max_body_bytes", MirrorPolicy.DEFAULT_MAX_BODY_BYTES);
        int maxConcurrent = o.integer("max_concurrent", MirrorPolicy.DEFAULT_MAX_CONCURRENT);
        Duration timeout = o.duration("timeout", null);
        o.finish();
        return build(o.path(), () -> new MirrorPolicy(cluster, percent, maxBody, maxConcurrent, timeout));
    }

    /** A cluster's {@code ring_hash: {min_ring_size, max_ring_size}} and {@code maglev: {table_size}}. */
    static HashLbConfig hashLb(JsonObject cluster) {
        JsonObject ring = cluster.object("ring_hash");
        JsonObject maglev = cluster.object("maglev");
        if (ring == null && maglev == null) {
            return null;
        }
        HashLbConfig d = HashLbConfig.defaults();
        int min = d.minRingSize();
        int max = d.maxRingSize();
        int table = d.maglevTableSize();
        if (ring != null) {
            min = ring.integer("min_ring_size", min);
            max = ring.integer("max_ring_size", max);
            ring.finish();
        }
        if (maglev != null) {
            table = maglev.integer("table_size", table);
            maglev.finish();
        }
        int mn = min;
        int mx = max;
        int t = table;
        try {
            return new HashLbConfig(mn, mx, t);
        } catch (ConfigException e) {
            String owner = e.path().equals("table_size") ? (maglev != null ? maglev.path() : cluster.path())
                    : (ring != null ? ring.path() : cluster.path());
            throw e.under(owner);
        }
    }

    /**
     * Warns about {@code ring_hash} / {@code maglev} clusters that no route gives a {@code hash_policy}:
     * their requests carry no key and get a random host, which is rarely what was meant.
     */
    static void warnUnkeyedHashClusters(GatewayConfig config, String clustersPath, List<String> warnings) {
        Set<String> keyed = new HashSet<>();
        for (ListenerConfig l : config.listeners()) {
            for (RouteConfig r : l.routes()) {
                if (r.traffic() != null && !r.traffic().hashPolicy().isEmpty()) {
                    keyed.addAll(r.clustersUsed());
                }
            }
        }
        List<ClusterConfig> clusters = config.clusters();
        for (int i = 0; i < clusters.size(); i++) {
            ClusterConfig c = clusters.get(i);
            if (c.lb().hashed() && !keyed.contains(c.name())) {
                warnings.add(clustersPath + "[" + i + "].lb: \"" + c.lb().jsonName() + "\" in cluster \"" + c.name()
                        + "\" but no route to it has a hash_policy: its requests have no key and get a random host");
            }
        }
    }

    // ------------------------------------------------------------------ MOSN format

    /**
     * MOSN: the route action's {@code weighted_clusters} ({@code [{"cluster": {"name", "weight"}}]}) and
     * {@code hash_policy} ({@code [{"header": {"key"}}, {"cookie": {"name"}}, {"source_ip": {}}]}), and the
     * router's {@code request_mirror_policies} ({@code {"cluster", "percent"}}); null when none is set.
     * What cannot be mapped (metadata_match, a cookie path or ttl, trace_sampled) is an error naming the path.
     */
    static TrafficPolicy mosnRoute(JsonObject action, JsonObject router) {
        List<WeightedCluster> weighted = action.array("weighted_clusters", (n, p) -> {
            JsonObject wrapper = JsonObject.of(n, p);
            JsonObject c = wrapper.object("cluster");
            if (c == null) {
                throw new ConfigException(wrapper.at("cluster"), null, "{\"name\": .., \"weight\": ..}");
            }
            wrapper.finish();
            String name = c.requiredString("name");
            int weight = c.integer("weight", 0);
            c.rejectUnless("metadata_match", v -> v.isContainerNode() && v.size() == 0,
                    "nothing here: subset load balancing is not supported");
            c.finish();
            return build(c.path(), () -> new WeightedCluster(name, weight));
        });
        WeightedClusters wc = weighted.isEmpty() ? null
                : build(action.at("weighted_clusters"), () -> new WeightedClusters(weighted, false));
        List<HashPolicy> hash = action.array("hash_policy", (n, p) -> {
            JsonObject o = JsonObject.of(n, p);
            JsonObject header = o.object("header");
            JsonObject cookie = o.object("cookie");
            JsonObject source = o.object("source_ip");
            int given = (header != null ? 1 : 0) + (cookie != null ? 1 : 0) + (source != null ? 1 : 0);
            if (given != 1) {
                throw new ConfigException(p, given == 0 ? "{}" : "several sources",
                        "exactly one of {\"header\": {\"key\": ..}}, {\"cookie\": {\"name\": ..}}, {\"source_ip\": {}}");
            }
            o.finish();
            HashPolicy h;
            if (header != null) {
                String key = header.requiredString("key");
                header.finish();
                h = build(header.path(), () -> HashPolicy.header(key));
            } else if (cookie != null) {
                String name = cookie.requiredString("name");
                cookie.rejectUnless("path", v -> v.isTextual() && v.asText().isEmpty(),
                        "nothing here: the gateway never sets the cookie, it only reads it");
                cookie.rejectUnless("ttl", v -> v.isTextual() && (v.asText().isEmpty() || v.asText().equals("0s")),
                        "nothing here: the gateway never sets the cookie, it only reads it");
                cookie.finish();
                h = build(cookie.path(), () -> HashPolicy.cookie(name));
            } else {
                source.finish();
                h = HashPolicy.clientAddress();
            }
            return h;
        });
        List<MirrorPolicy> mirrors = List.of();
        JsonObject m = router.object("request_mirror_policies");
        if (m != null) {
            String cluster = m.requiredString("cluster");
            double percent = m.has("percent") ? m.integer("percent", 100) : 100;
            m.rejectUnless("trace_sampled", v -> v.isBoolean() && !v.asBoolean(),
                    "false: mirroring does not follow trace sampling");
            m.finish();
            mirrors = List.of(build(m.path(), () -> new MirrorPolicy(cluster, percent, MirrorPolicy.DEFAULT_MAX_BODY_BYTES,
                    MirrorPolicy.DEFAULT_MAX_CONCURRENT, null)));
        }
        List<MirrorPolicy> ms = mirrors;
        return build(action.path(), () -> TrafficPolicy.of(wc, hash, ms));
    }

    // ------------------------------------------------------------------ rendering (the /config endpoint)

    static void render(ObjectNode route, TrafficPolicy t) {
        if (t == null) {
            return;
        }
        if (t.weightedClusters() != null) {
            ObjectNode w = route.putObject("weighted_clusters");
            ArrayNode cs = w.putArray("clusters");
            for (WeightedCluster c : t.weightedClusters().clusters()) {
                cs.addObject().put("name", c.name()).put("weight", c.weight());
            }
            w.put("sticky", t.weightedClusters().sticky());
        }
        if (!t.hashPolicy().isEmpty()) {
            ArrayNode hs = route.putArray("hash_policy");
            for (HashPolicy h : t.hashPolicy()) {
                switch (h.kind()) {
                    case HEADER -> hs.addObject().put("header", h.name());
                    case COOKIE -> hs.addObject().put("cookie", h.name());
                    case CLIENT_ADDRESS -> hs.addObject().put("client_address", true);
                    case SERVICE -> hs.addObject().put("service", true);
                }
            }
        }
        if (!t.mirrors().isEmpty()) {
            ArrayNode ms = route.putArray("mirrors");
            for (MirrorPolicy m : t.mirrors()) {
                ObjectNode mn = ms.addObject().put("cluster", m.cluster()).put("percent", m.percent())
                        .put("max_body_bytes", m.maxBodyBytes()).put("max_concurrent", m.maxConcurrent());
                if (m.timeout() != null) {
                    mn.put("timeout", DurationFormat.format(m.timeout()));
                }
            }
        }
    }

    static void render(ObjectNode cluster, HashLbConfig h) {
        if (h.equals(HashLbConfig.defaults())) {
            return;
        }
        cluster.putObject("ring_hash").put("min_ring_size", h.minRingSize()).put("max_ring_size", h.maxRingSize());
        cluster.putObject("maglev").put("table_size", h.maglevTableSize());
    }
}
