package io.sluice.server.config;

import io.sluice.core.config.ConfigException;
import io.sluice.core.config.GatewayConfig;
import io.sluice.core.config.HashLbConfig;
import io.sluice.core.config.HashPolicy;
import io.sluice.core.config.LbPolicy;
import io.sluice.core.config.MirrorPolicy;
import io.sluice.core.config.Protocol;
import io.sluice.core.config.RouteConfig;
import io.sluice.core.config.TrafficPolicy;
import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

/** The native JSON of weighted clusters, hash policies, mirrors and hash-LB sizes: read, rendered, and every bad value named by path. */
class TrafficConfigTest {

    private static String config(String route, String clusterExtra) {
        return """
                {"listeners": [{"name": "web", "port": 8080, "routes": [%s]}],
                 "clusters": [{"name": "a", "hosts": ["127.0.0.1:9000"]%s},
                              {"name": "b", "hosts": ["127.0.0.1:9001"]},
                              {"name": "shadow", "hosts": ["127.0.0.1:9002"]},
                              {"name": "rpc", "protocol": "bolt", "hosts": ["127.0.0.1:9003"]}]}
                """.formatted(route, clusterExtra);
    }

    private static GatewayConfig load(String route, String clusterExtra) {
        return ConfigLoader.parse(config(route, clusterExtra), "t.json").config();
    }

    private static String error(String route, String clusterExtra) {
        try {
            ConfigLoader.parse(config(route, clusterExtra), "t.json");
        } catch (ConfigException e) {
            return e.getMessage();
        }
        throw new AssertionError("no error for " + route + " / " + clusterExtra);
    }

    private static final String FULL = """
            {"weighted_clusters": {"clusters": [{"name": "a", "weight": 99}, {"name": "b", "weight": 1}], "sticky": true},
             "hash_policy": [{"header": "x-user"}, {"cookie": "sid"}, {"client_address": true}],
             "mirrors": [{"cluster": "shadow", "percent": 12.5, "max_body_bytes": "1KiB", "max_concurrent": 4, "timeout": "2s"}]}""";

    @Test
    void readsEveryKeyAndSurvivesRendering() {
        GatewayConfig c = load(FULL, ", \"lb\": \"maglev\", \"maglev\": {\"table_size\": 251}, \"ring_hash\": {\"min_ring_size\": 64}");
        RouteConfig r = c.listeners().get(0).routes().get(0);
        TrafficPolicy t = r.traffic();
        assertThat(r.cluster()).isEqualTo("a");
        assertThat(t.weightedClusters().sticky()).isTrue();
        assertThat(t.weightedClusters().totalWeight()).isEqualTo(100);
        assertThat(t.hashPolicy()).containsExactly(HashPolicy.header("x-user"), HashPolicy.cookie("sid"),
                HashPolicy.clientAddress());
        assertThat(t.mirrors()).containsExactly(new MirrorPolicy("shadow", 12.5, 1024, 4, Duration.ofSeconds(2)));
        assertThat(c.cluster("a").lb()).isEqualTo(LbPolicy.MAGLEV);
        assertThat(c.cluster("a").hashLb()).isEqualTo(new HashLbConfig(64, HashLbConfig.DEFAULT_MAX_RING_SIZE, 251));
        assertThat(c.cluster("b").hashLb()).isEqualTo(HashLbConfig.defaults());
        GatewayConfig again = ConfigLoader.parse(ConfigJson.render(c), "rendered").config();
        assertThat(again.listeners().get(0).routes()).isEqualTo(c.listeners().get(0).routes());
        assertThat(again.clusters()).isEqualTo(c.clusters());
    }

    @Test
    void aHashClusterWithoutAKeyedRouteIsWarnedAbout() {
        LoadedConfig unkeyed = ConfigLoader.parse(config("{\"cluster\": \"a\"}", ", \"lb\": \"ring_hash\""), "t.json");
        assertThat(unkeyed.warnings()).containsExactly("$.clusters[0].lb: \"ring_hash\" in cluster \"a\" but no route to it"
                + " has a hash_policy: its requests have no key and get a random host");
        assertThat(ConfigLoader.parse(config("{\"cluster\": \"a\", \"hash_policy\": [{\"header\": \"x\"}]}",
                ", \"lb\": \"ring_hash\""), "t.json").warnings()).isEmpty();
    }

    @Test
    void aRouteWithoutTrafficKeysHasNoPolicy() {
        assertThat(load("{\"cluster\": \"a\"}", "").listeners().get(0).routes().get(0).traffic()).isNull();
        assertThat(LbPolicy.parse("LB_MAGLEV")).isEqualTo(LbPolicy.MAGLEV);
        assertThat(LbPolicy.parse("LB_RING_HASH")).isEqualTo(LbPolicy.RING_HASH);
    }

    @Test
    void everyBadValueNamesItsPath() {
        String r = "$.listeners[0].routes[0]";
        assertThat(error("{\"cluster\": \"a\", \"weighted_clusters\": {\"clusters\": [{\"name\": \"b\", \"weight\": 1}]}}", ""))
                .startsWith(r + ".cluster:");
        assertThat(error("{\"weighted_clusters\": {\"clusters\": []}}", "")).startsWith(r + ".weighted_clusters.clusters:");
        assertThat(error("{\"weighted_clusters\": {\"clusters\": [{\"name\": \"a\"}]}}", ""))
                .startsWith(r + ".weighted_clusters.clusters[0].weight:");
        assertThat(error("{\"weighted_clusters\": {\"clusters\": [{\"name\": \"a\", \"weight\": -1}]}}", ""))
                .startsWith(r + ".weighted_clusters.clusters[0].weight:");
        assertThat(error("{\"weighted_clusters\": {\"clusters\": [{\"name\": \"a\", \"weight\": 0}]}}", ""))
                .startsWith(r + ".weighted_clusters.clusters:").contains("total weight 0");
        assertThat(error("{\"weighted_clusters\": {\"clusters\": [{\"name\": \"a\", \"weight\": 9000}, {\"name\": \"b\", \"weight\": 2000}]}}", ""))
                .startsWith(r + ".weighted_clusters.clusters:").contains("10000");
        assertThat(error("{\"weighted_clusters\": {\"clusters\": [{\"name\": \"a\", \"weight\": 1}, {\"name\": \"a\", \"weight\": 1}]}}", ""))
                .startsWith(r + ".weighted_clusters.clusters[1].name:");
        assertThat(error("{\"weighted_clusters\": {\"clusters\": [{\"name\": \"a\", \"weight\": 1}, {\"name\": \"nope\", \"weight\": 1}]}}", ""))
                .startsWith(r + ".weighted_clusters.clusters[1].name:").contains("\"nope\"");
        assertThat(error("{\"weighted_clusters\": {\"clusters\": [{\"name\": \"a\", \"weight\": 1}, {\"name\": \"rpc\", \"weight\": 1}]}}", ""))
                .startsWith(r + ".weighted_clusters.clusters[1].name:").contains("speaking http");
        assertThat(error("{\"weighted_clusters\": {\"clusters\": [{\"name\": \"a\", \"weight\": 1, \"wieght\": 2}]}}", ""))
                .startsWith(r + ".weighted_clusters.clusters[0]");
        assertThat(error("{\"weighted_clusters\": {\"clusters\": [{\"name\": \"a\", \"weight\": 1}], \"sticky\": true}}", ""))
                .startsWith(r + ".weighted_clusters.sticky:");
        assertThat(error("{\"weighted_clusters\": {\"clusters\": [{\"name\": \"a\", \"weight\": 1}], \"sticky\": \"yes\"}}", ""))
                .startsWith(r + ".weighted_clusters.sticky:");
        assertThat(error("{\"cluster\": \"a\", \"hash_policy\": [{}]}", "")).startsWith(r + ".hash_policy[0]:");
        assertThat(error("{\"cluster\": \"a\", \"hash_policy\": [{\"header\": \"x\", \"cookie\": \"y\"}]}", ""))
                .startsWith(r + ".hash_policy[0]:");
        assertThat(error("{\"cluster\": \"a\", \"hash_policy\": [{\"header\": \"\"}]}", "")).startsWith(r + ".hash_policy[0].header:");
        assertThat(error("{\"cluster\": \"a\", \"hash_policy\": [{\"service\": true}]}", "")).startsWith(r + ".hash_policy[0]:");
        assertThat(error("{\"cluster\": \"a\", \"hash_policy\": [{\"query\": \"q\"}]}", "")).startsWith(r + ".hash_policy[0]");
        assertThat(error("{\"cluster\": \"a\", \"mirrors\": [{\"percent\": 5}]}", "")).startsWith(r + ".mirrors[0].cluster:");
        assertThat(error("{\"cluster\": \"a\", \"mirrors\": [{\"cluster\": \"shadow\", \"percent\": 0}]}", ""))
                .startsWith(r + ".mirrors[0].percent:");
        assertThat(error("{\"cluster\": \"a\", \"mirrors\": [{\"cluster\": \"shadow\", \"percent\": 101}]}", ""))
                .startsWith(r + ".mirrors[0].percent:");
        assertThat(error("{\"cluster\": \"a\", \"mirrors\": [{\"cluster\": \"shadow\", \"max_concurrent\": 0}]}", ""))
                .startsWith(r + ".mirrors[0].max_concurrent:");
        assertThat(error("{\"cluster\": \"a\", \"mirrors\": [{\"cluster\": \"shadow\", \"max_body_bytes\": \"lots\"}]}", ""))
                .startsWith(r + ".mirrors[0].max_body_bytes:");
        assertThat(error("{\"cluster\": \"a\", \"mirrors\": [{\"cluster\": \"shadow\", \"timeout\": \"0s\"}]}", ""))
                .startsWith(r + ".mirrors[0].timeout:");
        assertThat(error("{\"cluster\": \"a\", \"mirrors\": [{\"cluster\": \"ghost\"}]}", "")).startsWith(r + ".mirrors[0].cluster:");
        assertThat(error("{\"cluster\": \"a\", \"mirrors\": [{\"cluster\": \"rpc\"}]}", "")).startsWith(r + ".mirrors[0].cluster:");
        String c = "$.clusters[0]";
        assertThat(error("{\"cluster\": \"a\"}", ", \"lb\": \"consistent\"")).startsWith(c + ".lb:");
        assertThat(error("{\"cluster\": \"a\"}", ", \"maglev\": {\"table_size\": 65536}")).startsWith(c + ".maglev.table_size:");
        assertThat(error("{\"cluster\": \"a\"}", ", \"maglev\": {\"size\": 7}")).startsWith(c + ".maglev");
        assertThat(error("{\"cluster\": \"a\"}", ", \"ring_hash\": {\"min_ring_size\": 0}")).startsWith(c + ".ring_hash.min_ring_size:");
        assertThat(error("{\"cluster\": \"a\"}", ", \"ring_hash\": {\"min_ring_size\": 4096, \"max_ring_size\": 1024}"))
                .startsWith(c + ".ring_hash.min_ring_size:");
        assertThat(error("{\"cluster\": \"a\"}", ", \"ring_hash\": {\"max_ring_size\": 99999999}")).startsWith(c + ".ring_hash.max_ring_size:");
    }

    private static String mosn(String route, String router) {
        return """
                {"servers": [{"listeners": [{"name": "l", "address": "127.0.0.1:2046",
                   "filter_chains": [{"filters": [{"type": "proxy", "config": {"downstream_protocol": "%s",
                     "router_config_name": "r"}}]}]}],
                  "routers": [{"router_config_name": "r", "virtual_hosts": [{"name": "v", "domains": ["*"],
                     "routers": [{"match": {"prefix": "/"}, "route": {%s}%s}]}]}]}],
                 "cluster_manager": {"clusters": [
                   {"name": "a", "type": "SIMPLE", "lb_type": "LB_MAGLEV", "hosts": [{"address": "127.0.0.1:9000"}]},
                   {"name": "b", "type": "SIMPLE", "hosts": [{"address": "127.0.0.1:9001"}]},
                   {"name": "shadow", "type": "SIMPLE", "hosts": [{"address": "127.0.0.1:9002"}]}]}}
                """.formatted(route.contains("bolt") ? "bolt" : "Http1", route.replace("bolt", ""), router);
    }

    private static String mosnError(String route, String router) {
        try {
            ConfigLoader.parse(mosn(route, router), "m.json");
        } catch (ConfigException e) {
            return e.getMessage();
        }
        throw new AssertionError("no error for " + route + " / " + router);
    }

    @Test
    void mosnWeightedClustersHashPolicyAndMirrorsMap() {
        String route = """
                "weighted_clusters": [{"cluster": {"name": "a", "weight": 90}}, {"cluster": {"name": "b", "weight": 10}}],
                "hash_policy": [{"header": {"key": "x-user"}}, {"cookie": {"name": "sid"}}, {"source_ip": {}}]""";
        String mirror = ", \"request_mirror_policies\": {\"cluster\": \"shadow\", \"percent\": 25}";
        GatewayConfig c = ConfigLoader.parse(mosn(route, mirror), "m.json").config();
        RouteConfig r = c.listeners().get(0).routes().get(0);
        assertThat(r.cluster()).isEqualTo("a");
        assertThat(r.traffic().weightedClusters().clusters()).extracting(w -> w.name() + "=" + w.weight())
                .containsExactly("a=90", "b=10");
        assertThat(r.traffic().hashPolicy()).containsExactly(HashPolicy.header("x-user"), HashPolicy.cookie("sid"),
                HashPolicy.clientAddress());
        assertThat(r.traffic().mirrors()).extracting(MirrorPolicy::cluster, MirrorPolicy::percent).containsExactly(
                tuple("shadow", 25.0));
        assertThat(c.cluster("a").lb()).isEqualTo(LbPolicy.MAGLEV);
        // a Bolt listener's split makes both clusters Bolt clusters
        GatewayConfig bolt = ConfigLoader.parse(mosn("bolt\"weighted_clusters\": [{\"cluster\": {\"name\": \"a\", \"weight\": 1}},"
                + " {\"cluster\": {\"name\": \"b\", \"weight\": 1}}]", ""), "m.json").config();
        assertThat(bolt.cluster("b").protocol()).isEqualTo(Protocol.BOLT);
    }

    @Test
    void mosnTrafficKeysThatCannotBeMappedNameTheirPath() {
        String r = "$.servers[0].routers[0].virtual_hosts[0].routers[0]";
        String two = "\"weighted_clusters\": [{\"cluster\": {\"name\": \"a\", \"weight\": 1}}]";
        assertThat(mosnError("\"cluster_name\": \"b\", " + two, "")).startsWith(r + ".route.cluster_name:");
        assertThat(mosnError("\"weighted_clusters\": [{\"name\": \"a\"}]", "")).startsWith(r + ".route.weighted_clusters[0]");
        assertThat(mosnError("\"weighted_clusters\": [{\"cluster\": {\"name\": \"a\", \"weight\": 0}}]", ""))
                .startsWith(r + ".route.weighted_clusters.clusters:");
        assertThat(mosnError("\"weighted_clusters\": [{\"cluster\": {\"name\": \"zz\", \"weight\": 1}}]", ""))
                .contains(".weighted_clusters.clusters[0].name:");
        assertThat(mosnError("\"cluster_name\": \"a\", \"hash_policy\": [{\"cookie\": {\"name\": \"sid\", \"ttl\": \"1h\"}}]", ""))
                .startsWith(r + ".route.hash_policy[0].cookie.ttl:");
        assertThat(mosnError("\"cluster_name\": \"a\", \"hash_policy\": [{\"header\": {}}]", ""))
                .startsWith(r + ".route.hash_policy[0].header.key:");
        assertThat(mosnError("\"cluster_name\": \"a\", \"hash_policy\": [{\"query\": {\"name\": \"q\"}}]", ""))
                .startsWith(r + ".route.hash_policy[0]");
        assertThat(mosnError("\"cluster_name\": \"a\"", ", \"request_mirror_policies\": {\"cluster\": \"shadow\", \"trace_sampled\": true}"))
                .startsWith(r + ".request_mirror_policies.trace_sampled:");
        assertThat(mosnError("\"cluster_name\": \"a\"", ", \"request_mirror_policies\": {\"cluster\": \"shadow\", \"percent\": 0}"))
                .startsWith(r + ".request_mirror_policies.percent:");
        assertThat(mosnError("\"cluster_name\": \"a\", \"request_mirror_policies\": {\"cluster\": \"shadow\"}", ""))
                .startsWith(r + ".route.request_mirror_policies:").contains("on the router");
    }
}
