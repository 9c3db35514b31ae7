package io.sluice.server.config;

import io.sluice.core.config.ClusterConfig;
import io.sluice.core.config.ConfigException;
import io.sluice.core.config.GatewayConfig;
import io.sluice.core.config.HealthCheckConfig;
import io.sluice.core.config.HostConfig;
import io.sluice.core.config.HttpOptions;
import io.sluice.core.config.LbPolicy;
import io.sluice.core.config.ListenerConfig;
import io.sluice.core.config.OutlierConfig;
import io.sluice.core.config.PathOptions;
import io.sluice.core.config.Protocol;
import io.sluice.core.config.RouteConfig;
import io.sluice.core.config.StatusRange;
import io.sluice.core.config.StringMatch;
import io.sluice.core.config.TransportConfig;
import io.sluice.core.config.WatchConfig;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class ConfigLoaderTest {

    private static final Path CONFIG_DIR = Path.of("..", "config");

    private static GatewayConfig nat(String json) {
        LoadedConfig c = ConfigLoader.parse(json, "test.json");
        assertThat(c.format()).isEqualTo(LoadedConfig.Format.NATIVE);
        return c.config();
    }

    private static String error(String json) {
        try {
            ConfigLoader.parse(json, "test.json");
        } catch (ConfigException e) {
            return e.getMessage();
        }
        throw new AssertionError("no error for " + json);
    }

    private static final String MIN = """
            {"listeners": [{"name": "web", "port": 8080, "routes": [{"cluster": "api"}]}],
             "clusters": [{"name": "api", "hosts": ["127.0.0.1:9000"]}]}""";

    @Test
    void theShippedExampleReadsIntoTheExpectedRecords() {
        LoadedConfig loaded = ConfigLoader.load(CONFIG_DIR.resolve("sluice.json"));
        GatewayConfig c = loaded.config();
        assertThat(loaded.warnings()).isEmpty();
        ListenerConfig web = c.listeners().get(0);
        assertThat(web.port()).isEqualTo(8080);
        assertThat(web.http().maxRequestBodyBytes()).isEqualTo(10L << 20);
        assertThat(web.routes()).extracting(RouteConfig::name).containsExactly("shop", "api-v1", "canary", "default");
        RouteConfig v1 = web.routes().get(1);
        assertThat(v1.match().path()).isEqualTo(StringMatch.prefix("/api/v1/"));
        assertThat(v1.match().methods()).containsExactly("GET", "POST");
        assertThat(v1.prefixRewrite()).isEqualTo("/");
        assertThat(v1.timeout()).isEqualTo(Duration.ofSeconds(5));
        assertThat(web.routes().get(0).match().hosts()).containsExactly("shop.example.com", "*.shop.example.com");
        assertThat(web.routes().get(2).match().headers().get(0).value()).isEqualTo(StringMatch.exact("1"));

        ListenerConfig rpc = c.listeners().get(1);
        assertThat(rpc.protocol()).isEqualTo(Protocol.BOLT);
        assertThat(rpc.bolt().defaultCluster()).isEqualTo("rpc");
        assertThat(rpc.routes().get(0).match().service()).isEqualTo(StringMatch.prefix("com.example.order."));

        ClusterConfig api = c.cluster("api");
        assertThat(api.hosts()).containsExactly(new HostConfig("127.0.0.1", 9001, 1), new HostConfig("127.0.0.1", 9002, 2),
                new HostConfig("127.0.0.1", 9003, 3));
        assertThat(api.slowStart().window()).isEqualTo(Duration.ofSeconds(30));
        assertThat(api.slowStart().minWeight()).isEqualTo(0.10);
        HealthCheckConfig hc = api.healthCheck();
        assertThat(hc.probe()).isEqualTo("http");
        assertThat(hc.httpPath()).isEqualTo("/healthz");
        assertThat(hc.intervalJitter()).isEqualTo(Duration.ofMillis(500));
        assertThat(hc.expectedStatuses()).containsExactly(new StatusRange(200, 299), new StatusRange(304, 304));
        assertThat(api.outlier().consecutiveFailures()).isEqualTo(5);
        assertThat(c.cluster("shop").lb()).isEqualTo(LbPolicy.LEAST_REQUEST);
        assertThat(c.cluster("rpc").pool().boltConnectionsPerHost()).isEqualTo(2);
        assertThat(c.admin().port()).isEqualTo(34901);
        assertThat(c.drainTimeout()).isEqualTo(Duration.ofSeconds(10));
    }

    @Test
    void everyShippedConfigLoads() throws IOException {
        List<Path> files;
        try (Stream<Path> s = Files.walk(CONFIG_DIR)) {
            files = s.filter(p -> p.toString().endsWith(".json")).toList();
        }
        assertThat(files).hasSizeGreaterThanOrEqualTo(3);
        for (Path f : files) {
            assertThat(ConfigLoader.load(f).config().listeners()).as(f.toString()).isNotEmpty();
        }
    }

    @Test
    void defaultsFillWhatIsLeftOut() {
        GatewayConfig c = nat(MIN);
        ClusterConfig api = c.cluster("api");
        assertThat(api.lb()).isEqualTo(LbPolicy.WEIGHTED_ROUND_ROBIN);
        assertThat(api.connectTimeout()).isEqualTo(ClusterConfig.DEFAULT_CONNECT_TIMEOUT);
        assertThat(api.healthCheck()).isNull();
        assertThat(c.listeners().get(0).address()).isEqualTo("127.0.0.1");
        assertThat(c.admin().enabled()).isTrue();
    }

    @Test
    void theBuildersDefaultsAreTheLoadersDefaults() {
        GatewayConfig c = nat("""
                {"listeners": [{"name": "web", "port": 0, "routes": [{"cluster": "api"}], "http": {}, "bolt": {}}],
                 "clusters": [{"name": "api", "hosts": ["127.0.0.1:9000"], "pool": {}, "health_check": {}, "outlier": {}}],
                 "transport": {}}""");
        assertThat(c.listeners().get(0)).isEqualTo(ListenerConfig.builder().name("web").routes(RouteConfig.to("api")).build());
        assertThat(c.cluster("api")).isEqualTo(ClusterConfig.builder().name("api").hosts(new HostConfig("127.0.0.1", 9000, 1))
                .healthCheck(HealthCheckConfig.builder().build()).outlier(OutlierConfig.builder().build()).build());
        assertThat(c.transport()).isEqualTo(TransportConfig.builder().build());
        assertThat(c.drainTimeout()).isEqualTo(GatewayConfig.builder().listeners(c.listeners()).clusters(c.clusters()).build().drainTimeout());
    }

    @Test
    void watchConfigIsOffByDefaultOnWhenPresentAndItsIntervalIsAtLeast100ms() {
        assertThat(nat(MIN).watchConfig()).isEqualTo(new WatchConfig(false, Duration.ofSeconds(2)));
        String with = MIN.substring(0, MIN.length() - 1) + ", \"watch_config\": %s}";
        assertThat(nat(with.formatted("{}")).watchConfig()).isEqualTo(new WatchConfig(true, Duration.ofSeconds(2)));
        assertThat(nat(with.formatted("{\"enabled\": false, \"interval\": \"2s\"}")).watchConfig().enabled()).isFalse();
        assertThat(nat(with.formatted("{\"interval\": \"250ms\"}")).watchConfig())
                .isEqualTo(new WatchConfig(true, Duration.ofMillis(250)));
        assertThat(error(with.formatted("{\"interval\": \"50ms\"}")))
                .startsWith("$.watch_config.interval:").contains("\"50ms\"", ">= 100ms");
        assertThat(error(with.formatted("{\"interval\": \"soon\"}")))
                .startsWith("$.watch_config.interval:").contains("\"soon\"");
        assertThat(error(with.formatted("{\"intervall\": \"1s\"}")))
                .startsWith("$.watch_config.intervall:").contains("did you mean \"interval\"");
        // rendered (for /config) and read back
        GatewayConfig c = nat(with.formatted("{\"interval\": \"750ms\"}"));
        assertThat(nat(ConfigJson.render(c)).watchConfig()).isEqualTo(c.watchConfig());
    }

    @Test
    void reusePortIsOffByDefaultReadsABooleanAndSurvivesRendering() {
        assertThat(nat(MIN).transport().reusePort()).isFalse();
        String with = MIN.substring(0, MIN.length() - 1) + ", \"transport\": {\"worker_threads\": 4, \"reuse_port\": %s}}";
        GatewayConfig c = nat(with.formatted("true"));
        assertThat(c.transport().reusePort()).isTrue();
        assertThat(nat(ConfigJson.render(c)).transport()).isEqualTo(c.transport());
        assertThat(error(with.formatted("\"yes\""))).startsWith("$.transport.reuse_port:").contains("\"yes\"");
    }

    @Test
    void slowClientLimitsHaveDefaultsReadTheirKeysSurviveRenderingAndNameTheirPath() {
        ListenerConfig d = nat(MIN).listeners().get(0);
        assertThat(d.maxConnections()).isEqualTo(16_384);
        assertThat(d.maxConnectionsPerClient()).isZero();
        assertThat(d.http().requestBodyTimeout()).isEqualTo(Duration.ofSeconds(30));
        assertThat(d.http().writeTimeout()).isEqualTo(Duration.ofSeconds(30));
        assertThat(d.http().drainGrace()).isEqualTo(Duration.ofMillis(500));
        assertThat(nat(MIN.replace("\"port\": 8080", "\"port\": 8080, \"http\": {\"drain_grace\": \"0s\"}"))
                .listeners().get(0).http().drainGrace()).isZero();
        assertThat(error(MIN.replace("\"port\": 8080", "\"port\": 8080, \"http\": {\"drain_grace\": \"-1s\"}")))
                .startsWith("$.listeners[0].http.drain_grace:");

        GatewayConfig c = nat(MIN.replace("\"port\": 8080", "\"port\": 8080, \"max_connections\": 500, "
                + "\"max_connections_per_client\": 20, \"http\": {\"request_body_timeout\": \"5s\", \"write_timeout\": \"750ms\", \"drain_grace\": \"2s\"}"));
        ListenerConfig l = c.listeners().get(0);
        assertThat(l.maxConnections()).isEqualTo(500);
        assertThat(l.maxConnectionsPerClient()).isEqualTo(20);
        assertThat(l.http().requestBodyTimeout()).isEqualTo(Duration.ofSeconds(5));
        assertThat(l.http().writeTimeout()).isEqualTo(Duration.ofMillis(750));
        assertThat(nat(ConfigJson.render(c)).listeners().get(0)).isEqualTo(l);

        assertThat(error(MIN.replace("\"port\": 8080", "\"port\": 8080, \"max_connections\": -1")))
                .startsWith("$.listeners[0].max_connections:").contains("-1");
        assertThat(error(MIN.replace("\"port\": 8080", "\"port\": 8080, \"max_connections_per_client\": -2")))
                .startsWith("$.listeners[0].max_connections_per_client:").contains("-2");
        assertThat(error(MIN.replace("\"port\": 8080", "\"port\": 8080, \"http\": {\"request_body_timeout\": \"0s\"}")))
                .startsWith("$.listeners[0].http.request_body_timeout:");
        assertThat(error(MIN.replace("\"port\": 8080", "\"port\": 8080, \"http\": {\"write_timeout\": \"soon\"}")))
                .startsWith("$.listeners[0].http.write_timeout:").contains("a duration like");
    }

    @Test
    void aListenerRoutesToClustersOfItsProtocolUnlessItIsAuto() {
        String two = """
                {"listeners": [{"name": "l", "protocol": "%s", "port": 8080, "routes": [{"cluster": "web"}, {"cluster": "rpc"}]}],
                 "clusters": [{"name": "web", "hosts": ["127.0.0.1:9000"]},
                              {"name": "rpc", "protocol": "bolt", "hosts": ["127.0.0.1:12220"]}]}""";
        assertThat(error(two.formatted("http"))).startsWith("$.listeners[0].routes[1].cluster:")
                .contains("\"rpc\"", "a cluster speaking http", "speaks bolt", "\"auto\"");
        assertThat(error(two.formatted("bolt"))).startsWith("$.listeners[0].routes[0].cluster:").contains("speaks http");
        GatewayConfig both = nat(two.formatted("auto"));
        assertThat(both.listeners().get(0).protocol()).isEqualTo(Protocol.AUTO);
        assertThat(nat(ConfigJson.render(both))).isEqualTo(both);
        assertThat(error(two.formatted("auto").replace("\"protocol\": \"bolt\"", "\"protocol\": \"auto\"")))
                .startsWith("$.clusters[1].protocol:").contains("\"auto\" is for listeners");
        assertThat(error(two.formatted("ftp"))).startsWith("$.listeners[0].protocol:").contains("\"http\", \"bolt\" or \"auto\"");
        assertThat(error(two.formatted("auto").replace("\"port\": 8080,", "\"port\": 8080, \"bolt\": {\"default_cluster\": \"web\"},")))
                .startsWith("$.listeners[0].bolt.default_cluster:").contains("a cluster speaking bolt");
        // conditions the target cannot meet: a path on a route to a Bolt cluster, a service on one to an HTTP cluster
        assertThat(error(two.formatted("auto").replace("{\"cluster\": \"rpc\"}", "{\"match\": {\"path\": \"/x\"}, \"cluster\": \"rpc\"}")))
                .startsWith("$.listeners[0].routes[1].match:").contains("\"rpc\" (bolt)", "HTTP's");
        assertThat(error(two.formatted("auto").replace("{\"cluster\": \"web\"}", "{\"match\": {\"service\": \"a.B\"}, \"cluster\": \"web\"}")))
                .startsWith("$.listeners[0].routes[0].match:").contains("\"web\" (http)", "Bolt's");
    }

    @Test
    void malformedJsonSaysWhere() {
        assertThat(error("{\"listeners\": [\n  {\"name\": \"web\",, }]}"))
                .contains("$", "valid JSON", "line 2");
    }

    @Test
    void unknownKeysAreErrorsWithASuggestion() {
        assertThat(error(MIN.replace("\"hosts\"", "\"hots\"")))
                .startsWith("$.clusters[0].hots:").contains("did you mean \"hosts\"");
        assertThat(error(MIN.replace("\"port\": 8080", "\"port\": 8080, \"helth\": 1")))
                .startsWith("$.listeners[0].helth:");
    }

    @Test
    void wrongTypesAndBadValuesNameThePathAndTheValue() {
        assertThat(error(MIN.replace("\"port\": 8080", "\"port\": \"8080\"")))
                .startsWith("$.listeners[0].port:").contains("\"8080\"", "a whole number");
        assertThat(error(MIN.replace("\"name\": \"api\",", "\"name\": \"api\", \"connect_timeout\": \"3 seconds\",")))
                .startsWith("$.clusters[0].connect_timeout:").contains("a duration like");
        assertThat(error(MIN.replace("127.0.0.1:9000", "127.0.0.1:99999")))
                .startsWith("$.clusters[0].hosts[0].address:").contains("99999");
        assertThat(error(MIN.replace("\"port\": 8080", "\"port\": 70000")))
                .startsWith("$.listeners[0].port:").contains("70000");
    }

    @Test
    void crossReferencesAreChecked() {
        assertThat(error(MIN.replace("\"cluster\": \"api\"", "\"cluster\": \"nope\"")))
                .startsWith("$.listeners[0].routes[0].cluster:").contains("\"nope\"", "[api]");
        assertThat(error(MIN.replace("\"hosts\": [\"127.0.0.1:9000\"]}",
                "\"hosts\": [\"127.0.0.1:9000\"]}, {\"name\": \"api\", \"hosts\": []}")))
                .startsWith("$.clusters[1].name:");
    }

    @Test
    void slowStartRefusesAZeroFloor() {
        assertThat(error(MIN.replace("\"hosts\": [\"127.0.0.1:9000\"]",
                "\"hosts\": [\"127.0.0.1:9000\"], \"slow_start\": {\"window\": \"30s\", \"min_weight_percent\": 0}")))
                .startsWith("$.clusters[0].slow_start.min_weight_percent:").contains("starves");
    }

    @Test
    void routeMatchesAcceptStringsAndKinds() {
        GatewayConfig c = nat(MIN.replace("{\"cluster\": \"api\"}",
                "{\"match\": {\"path\": \"/exact\"}, \"cluster\": \"api\"}, {\"match\": {\"path\": {\"regex\": \"/v[0-9]+/.*\"}}, \"cluster\": \"api\"}"));
        assertThat(c.listeners().get(0).routes().get(0).match().path()).isEqualTo(StringMatch.exact("/exact"));
        assertThat(c.listeners().get(0).routes().get(1).match().path().matches("/v2/x")).isTrue();
        assertThat(error(MIN.replace("{\"cluster\": \"api\"}", "{\"match\": {\"path\": {\"regex\": \"(\"}}, \"cluster\": \"api\"}")))
                .startsWith("$.listeners[0].routes[0].match.path.regex");
    }

    @Test
    void mosnHttpConfigMapsListenersRoutesClustersAndSlowStart() {
        LoadedConfig loaded = ConfigLoader.load(CONFIG_DIR.resolve("examples/mosn-http.json"));
        assertThat(loaded.format()).isEqualTo(LoadedConfig.Format.MOSN);
        GatewayConfig c = loaded.config();
        ListenerConfig l = c.listeners().get(0);
        assertThat(l.name()).isEqualTo("serverListener");
        assertThat(l.port()).isEqualTo(2046);
        assertThat(l.routes().get(0).cluster()).isEqualTo("serverCluster");
        assertThat(l.routes().get(0).match().path()).isEqualTo(StringMatch.prefix("/"));
        ClusterConfig cl = c.cluster("serverCluster");
        assertThat(cl.lb()).isEqualTo(LbPolicy.WEIGHTED_ROUND_ROBIN);
        assertThat(cl.hosts()).extracting(HostConfig::weight).containsExactly(1, 2, 3);
        assertThat(cl.slowStart().window()).isEqualTo(Duration.ofSeconds(30));
        assertThat(cl.slowStart().minWeight()).isEqualTo(0.1); // MOSN writes a fraction
        assertThat(cl.warmUpAtBoot()).isTrue(); // MOSN warms up every host present at boot
        assertThat(cl.healthCheck().probe()).isEqualTo(HealthCheckConfig.HTTP);
        assertThat(cl.healthCheck().initialDelay()).isEqualTo(Duration.ofSeconds(1));
        assertThat(loaded.warnings()).containsExactlyInAnyOrder(
                "$.servers[0]: default_log_path, default_log_level are ignored (MOSN process settings; Sluice logs through SLF4J)",
                "$.cluster_manager.clusters[0].health_check.service_name is ignored (labels and MOSN's health-check event"
                        + " log; transitions are logged and counted)");
    }

    @Test
    void mosnBoltConfigRoutesOnTheServiceHeader() {
        LoadedConfig loaded = ConfigLoader.load(CONFIG_DIR.resolve("examples/mosn-bolt.json"));
        ListenerConfig l = loaded.config().listeners().get(0);
        assertThat(l.protocol()).isEqualTo(Protocol.BOLT);
        assertThat(l.routes().get(0).match().service()).isEqualTo(StringMatch.exact("com.alipay.test.TestService:1.0"));
        assertThat(loaded.config().cluster("bolt_backend").protocol()).isEqualTo(Protocol.BOLT);
    }

    @Test
    void mosnOnlyKeysWarnAndUnsupportedOnesFail() {
        String mosn = """
                {"servers": [{"listeners": [{"name": "l", "address": "127.0.0.1:2046",
                   "filter_chains": [{"filters": [{"type": "proxy", "config": {"downstream_protocol": "Http1",
                     "router_config_name": "r"}}]}]}],
                  "routers": [{"router_config_name": "r", "virtual_hosts": [{"name": "v", "domains": ["*"],
                     "routers": [{"match": {"prefix": "/"}, "route": {"cluster_name": "c"}}]}]}]}],
                 "cluster_manager": {"clusters": [{"name": "c", "type": "SIMPLE", "lb_type": "LB_RANDOM",
                   "hosts": [{"address": "127.0.0.1:8080"}]}]},
                 "tracing": {"enable": true}}""";
        LoadedConfig loaded = ConfigLoader.parse(mosn, "m.json");
        assertThat(loaded.warnings()).containsExactly("$.tracing is ignored (MOSN-only)");
        assertThat(loaded.config().cluster("c").lb()).isEqualTo(LbPolicy.RANDOM);
        // HTTP/2 downstream: an HTTP listener (it takes h2c next to HTTP/1.1)
        assertThat(ConfigLoader.parse(mosn.replace("\"Http1\"", "\"Http2\""), "m.json").config().listeners().get(0)
                .protocol()).isEqualTo(io.sluice.core.config.Protocol.HTTP);
        assertThat(error(mosn.replace("\"Http1\"", "\"Http3\""))).contains("downstream_protocol", "\"Http2\"");
        assertThat(ConfigLoader.parse(mosn.replace("LB_RANDOM", "LB_MAGLEV"), "m.json").config().cluster("c").lb())
                .isEqualTo(LbPolicy.MAGLEV); // mapped since weighted clusters and hash balancing exist
        assertThat(error(mosn.replace("LB_RANDOM", "LB_REQUEST_ROUNDROBIN"))).startsWith("$.cluster_manager.clusters[0].lb_type:");
        assertThat(error(mosn.replace("\"SIMPLE\"", "\"STRICT_DNS\""))).startsWith("$.cluster_manager.clusters[0].type:");
    }

    private static final String MOSN = """
            {"servers": [{"listeners": [{"name": "l", "address": "127.0.0.1:2046",
               "filter_chains": [{"filters": [{"type": "proxy", "config": {"downstream_protocol": "Http1",
                 "upstream_protocol": "Http1", "router_config_name": "r"}}]}]}],
              "routers": [{"router_config_name": "r", "virtual_hosts": [{"name": "v", "domains": ["*"],
                 "routers": [{"match": {"prefix": "/"}, "route": {"cluster_name": "c"}}]}]}]}],
             "cluster_manager": {"clusters": [{"name": "c", "type": "SIMPLE",
               "health_check": {"protocol": "Http1", "check_config": {"http_check_config": {"path": "/"}}},
               "hosts": [{"address": "127.0.0.1:8080"}]}]}}""";

    /** {@link #MOSN} with {@code key: value} added to the object whose text starts with {@code anchor}. */
    private static String mosnWith(String anchor, String keyValue) {
        assertThat(MOSN).contains(anchor);
        return MOSN.replace(anchor, anchor + " " + keyValue + ",");
    }

    private static final String LISTENER = "{\"name\": \"l\",";
    private static final String CHAIN = "\"filter_chains\": [{";
    private static final String PROXY = "\"config\": {";
    private static final String VHOST = "{\"name\": \"v\",";
    private static final String ROUTE = "\"route\": {";
    private static final String CLUSTER = "{\"name\": \"c\",";
    private static final String CHECK = "\"http_check_config\": {";

    @Test
    void mosnKeysThatWouldChangeSecurityOrResilienceAreRejectedNamingPathAndValue() {
        assertThat(ConfigLoader.parse(MOSN, "m.json").warnings()).isEmpty();
        String[][] cases = {
                {CHAIN, "\"tls_context\": {\"status\": true, \"cert_chain\": \"c.pem\"}",
                        "$.servers[0].listeners[0].filter_chains[0].tls_context.private_key: missing", "non-empty"},
                {CHAIN, "\"tls_context_set\": [{\"status\": true}]",
                        "$.servers[0].listeners[0].filter_chains[0].tls_context_set[0].cert_chain:", "PEM"},
                {CHAIN, "\"tls_context\": {\"status\": true, \"cert_chain\": \"c.pem\", \"private_key\": \"k.pem\", \"fall_back\": true}",
                        "$.servers[0].listeners[0].filter_chains[0].tls_context.fall_back:", "plain text"},
                {LISTENER, "\"inspector\": true", "$.servers[0].listeners[0].inspector: bad value \"true\"", "TLS"},
                {LISTENER, "\"stream_filters\": [{\"type\": \"fault\"}]", "$.servers[0].listeners[0].stream_filters:", "would silently not run"},
                {LISTENER, "\"bind_port\": false", "$.servers[0].listeners[0].bind_port: bad value \"false\"", "true"},
                {PROXY, "\"fallback_for_unknown_protocol\": true", ".config.fallback_for_unknown_protocol: bad value \"true\"", "false"},
                {VHOST, "\"require_tls\": \"ALL\"", ".virtual_hosts[0].require_tls: bad value \"ALL\"", "TLS"},
                {VHOST, "\"request_headers_to_add\": [{\"key\": \"x\"}]", ".virtual_hosts[0].request_headers_to_add:", "not supported"},
                {ROUTE, "\"retry_policy\": {\"retry_on\": true, \"retry_host\": 3}", ".routers[0].route.retry_policy.retry_host: bad value", "retry"},
                {ROUTE, "\"weighted_clusters\": [{\"cluster\": {\"name\": \"c\", \"metadata_match\": {\"filter_metadata\": {}}}}]",
                        ".routers[0].route.weighted_clusters[0].cluster.metadata_match:", "subset load balancing is not supported"},
                {CLUSTER, "\"circuit_breakers\": [{\"priority\": \"HIGH\", \"max_connections\": 10}]",
                        "$.cluster_manager.clusters[0].circuit_breakers[0].priority: bad value \"HIGH\"", "priorities"},
                {CLUSTER, "\"max_request_per_conn\": 1024", "$.cluster_manager.clusters[0].max_request_per_conn: bad value \"1024\"", "limit"},
                {CLUSTER, "\"conn_buffer_limit_bytes\": 32768", "$.cluster_manager.clusters[0].conn_buffer_limit_bytes: bad value \"32768\"", "limit"},
                {CLUSTER, "\"tls_context\": {\"status\": true, \"fall_back\": true}", "$.cluster_manager.clusters[0].tls_context.fall_back:", "plain text"},
                {CLUSTER, "\"lb_subset_config\": {\"fall_back_policy\": 1}", "$.cluster_manager.clusters[0].lb_subset_config:", "not supported"},
                {CHECK, "\"timeout\": \"2s\"", ".health_check.check_config.http_check_config.timeout: bad value \"2s\"", "timeout"},
                {CHECK, "\"port\": 8081", ".http_check_config.port: bad value \"8081\"", "host's own port"},
                {"\"health_check\": {", "\"common_callbacks\": [\"x\"]", ".health_check.common_callbacks:", "not supported"},
                {"\"cluster_manager\": {", "\"tls_context\": {\"status\": true, \"ca_cert\": \"-----BEGIN CERTIFICATE-----\"}", "$.cluster_manager.tls_context.ca_cert:", "inline PEM"},
        };
        for (String[] c : cases) {
            assertThat(error(mosnWith(c[0], c[1]))).as(c[1]).contains(c[2], c[3]);
        }
        assertThat(error(MOSN.replace("{\"servers\":", "{\"dynamic_resources\": {\"lds_config\": {}}, \"servers\":")))
                .contains("$.dynamic_resources: bad value", "xDS");
        assertThat(error(MOSN.replace("\"upstream_protocol\": \"Http1\"", "\"upstream_protocol\": \"Http2\"")))
                .contains(".config.upstream_protocol: bad value \"Http2\"", "an HTTP/2 upstream is not supported yet");
        assertThat(error(MOSN.replace("\"type\": \"proxy\"", "\"type\": \"tcp_proxy\"")))
                .contains(".filters[0].type: bad value \"tcp_proxy\"", "other network filters are not supported");
        // the harmless forms of the same keys load
        for (String[] ok : new String[][] {{CHAIN, "\"tls_context\": {\"status\": false}"}, {LISTENER, "\"bind_port\": true"},
                {VHOST, "\"require_tls\": \"NONE\""}, {ROUTE, "\"retry_policy\": {}"}, {CLUSTER, "\"circuit_breakers\": []"}}) {
            assertThat(ConfigLoader.parse(mosnWith(ok[0], ok[1]), "m.json").warnings()).as(ok[1]).isEmpty();
        }
    }

    @Test
    void mosnTimeoutsThatMatterAreApplied() {
        String json = mosnWith(LISTENER, "\"connection_idle_timeout\": \"30s\"")
                .replace(CLUSTER, CLUSTER + " \"idle_timeout\": \"2s\",")
                .replace(CHECK, CHECK + " \"method\": \"HEAD\",")
                .replace("{\"listeners\":", "{\"graceful_timeout\": \"20s\", \"listeners\":");
        GatewayConfig c = ConfigLoader.parse(json, "m.json").config();
        assertThat(c.listeners().get(0).http().idleTimeout()).isEqualTo(Duration.ofSeconds(30));
        assertThat(c.listeners().get(0).bolt().idleTimeout()).isEqualTo(Duration.ofSeconds(30));
        assertThat(c.cluster("c").pool().idleTimeout()).isEqualTo(Duration.ofSeconds(2));
        assertThat(c.cluster("c").healthCheck().httpMethod()).isEqualTo("HEAD");
        assertThat(c.drainTimeout()).isEqualTo(Duration.ofSeconds(20));
    }

    @Test
    void mosnLabelsAndLoggingKeysAreWarnedAbout() {
        String json = mosnWith(LISTENER, "\"type\": \"ingress\", \"access_logs\": [{\"log_path\": \"/tmp/a\"}]")
                .replace("{\"address\": \"127.0.0.1:8080\"}", "{\"address\": \"127.0.0.1:8080\", \"hostname\": \"h1\"}")
                .replace("{\"servers\":", "{\"pprof\": {\"debug\": true}, \"servers\":");
        assertThat(ConfigLoader.parse(json, "m.json").warnings()).containsExactlyInAnyOrder(
                "$.pprof is ignored (MOSN-only)",
                "$.servers[0].listeners[0]: type, access_logs are ignored (MOSN labels and logs; see access_log in the native format)",
                "$.cluster_manager.clusters[0].hosts[0].hostname is ignored (host labels and metadata)");
    }

    @Test
    void everyNativeObjectRejectsAKeyItDoesNotKnow() {
        String template = """
                {/*0*/"listeners": [{/*1*/"name": "web", "port": 0, "http": {/*2*/}, "bolt": {/*3*/},
                   "routes": [{/*4*/"cluster": "api", "match": {/*5*/"path": {/*6*/"prefix": "/"},
                     "headers": [{/*7*/"name": "x", "exact": "y"}]}}]}],
                 "clusters": [{/*8*/"name": "api", "hosts": [{/*9*/"address": "127.0.0.1:9000"}], "pool": {/*10*/},
                   "health_check": {/*11*/"http": {/*12*/}}, "slow_start": {/*13*/"window": "1s"}, "outlier": {/*14*/}}],
                 "admin": {/*15*/}, "transport": {/*16*/}, "access_log": {/*17*/}, "watch_config": {/*18*/}}""";
        String[] paths = {"$", "$.listeners[0]", "$.listeners[0].http", "$.listeners[0].bolt", "$.listeners[0].routes[0]",
                "$.listeners[0].routes[0].match", "$.listeners[0].routes[0].match.path",
                "$.listeners[0].routes[0].match.headers[0]", "$.clusters[0]", "$.clusters[0].hosts[0]", "$.clusters[0].pool",
                "$.clusters[0].health_check", "$.clusters[0].health_check.http", "$.clusters[0].slow_start",
                "$.clusters[0].outlier", "$.admin", "$.transport", "$.access_log", "$.watch_config"};
        String clean = template.replaceAll("/\\*\\d+\\*/", "");
        assertThat(nat(clean).clusters()).hasSize(1);
        for (int i = 0; i < paths.length; i++) {
            String marker = "/*" + i + "*/";
            String objectWasEmpty = template.contains(marker + "}") ? "" : ", ";
            String json = template.replace(marker, "\"hedge_policy\": {\"n\": 3}" + objectWasEmpty).replaceAll("/\\*\\d+\\*/", "");
            assertThat(error(json)).as(paths[i]).startsWith(paths[i] + ".hedge_policy: bad value \"{\"n\":3}\"");
        }
        assertThat(error(clean.replace("\"exact\": \"y\"", "\"exact\": \"y\", \"present\": false")))
                .startsWith("$.listeners[0].routes[0].match.headers[0].present: bad value false");
    }

    @Test
    void mosnClusterSharedByAnHttpAndABoltListenerIsAnErrorAtTheSecondListener() {
        String mosn = """
                {"servers": [{"listeners": [
                   {"name": "web", "address": "127.0.0.1:2046", "filter_chains": [{"filters": [{"type": "proxy",
                     "config": {"downstream_protocol": "Http1", "router_config_name": "r"}}]}]},
                   {"name": "rpc", "address": "127.0.0.1:12200", "filter_chains": [{"filters": [{"type": "proxy",
                     "config": {"downstream_protocol": "bolt", "router_config_name": "r"}}]}]}],
                  "routers": [{"router_config_name": "r", "virtual_hosts": [{"name": "v", "domains": ["*"],
                     "routers": [{"match": {"prefix": "/"}, "route": {"cluster_name": "c"}}]}]}]}],
                 "cluster_manager": {"clusters": [{"name": "c", "type": "SIMPLE", "lb_type": "LB_RANDOM",
                   "hosts": [{"address": "127.0.0.1:8080"}]}]}}""";
        assertThat(error(mosn)).startsWith("$.servers[0].listeners[1].filter_chains:").contains("\"c\"",
                "$.servers[0].listeners[0] sends it http, this listener bolt");
    }

    @Test
    void missingFileIsAConfigError() {
        assertThatThrownBy(() -> ConfigLoader.load(Path.of("does-not-exist.json")))
                .isInstanceOf(ConfigException.class).hasMessageContaining("does-not-exist.json");
    }

    @Test
    void slowStartFloorOfZeroIsRejectedAndAFloorBelowFivePercentIsWarnedAbout() {
        String json = """
                {"listeners": [{"name": "web", "port": 8080, "routes": [{"cluster": "api"}]}],
                 "clusters": [{"name": "ok", "hosts": ["127.0.0.1:9000"], "slow_start": {"window": "30s"}},
                              {"name": "api", "hosts": ["127.0.0.1:9001"],
                               "slow_start": {"window": "30s", "min_weight_percent": 2}}]}""";
        LoadedConfig loaded = ConfigLoader.parse(json, "t.json");
        assertThat(loaded.warnings()).containsExactly("$.clusters[1].slow_start.min_weight_percent: 2 in cluster \"api\""
                + " is below 5 %: a warming host may get no traffic for long, even after its window"
                + " (Envoy #19526, #29259); 10 % is the default");
        assertThat(loaded.config().cluster("api").slowStart().minWeight()).isEqualTo(0.02);
        assertThat(ConfigLoader.parse(json.replace("\"min_weight_percent\": 2", "\"min_weight_percent\": 5"), "t.json")
                .warnings()).isEmpty();
        assertThat(error(json.replace("\"min_weight_percent\": 2", "\"min_weight_percent\": 0")))
                .startsWith("$.clusters[1].slow_start.min_weight_percent:").contains("0", "Envoy #19526");

        String mosn = """
                {"servers": [{"listeners": [{"name": "l", "address": "127.0.0.1:2046",
                   "filter_chains": [{"filters": [{"type": "proxy", "config": {"downstream_protocol": "Http1",
                     "router_config_name": "r"}}]}]}],
                  "routers": [{"router_config_name": "r", "virtual_hosts": [{"name": "v", "domains": ["*"],
                     "routers": [{"match": {"prefix": "/"}, "route": {"cluster_name": "c"}}]}]}]}],
                 "cluster_manager": {"clusters": [{"name": "c", "type": "SIMPLE", "lb_type": "LB_WEIGHTED_ROUNDROBIN",
                   "hosts": [{"address": "127.0.0.1:8080"}],
                   "slow_start": {"mode": "duration", "slow_start_duration": "30s", "min_weight_percent": 0.01}}]}}""";
        assertThat(ConfigLoader.parse(mosn, "m.json").warnings()).singleElement().asString()
                .startsWith("$.cluster_manager.clusters[0].slow_start.min_weight_percent: 0.01 (1 %) in cluster \"c\"");
        assertThat(error(mosn.replace("0.01", "0"))).startsWith("$.cluster_manager.clusters[0].slow_start.min_weight_percent:");
    }

    @Test
    void outlierEjectionDecayDefaultsToTheBaseTimeAndMustBePositive() {
        String json = """
                {"listeners": [{"name": "web", "port": 8080, "routes": [{"cluster": "api"}]}],
                 "clusters": [{"name": "api", "hosts": ["127.0.0.1:9001"],
                               "outlier": {"base_ejection_time": "20s"}}]}""";
        assertThat(ConfigLoader.parse(json, "t.json").config().cluster("api").outlier().ejectionDecay())
                .isEqualTo(Duration.ofSeconds(20));
        String withDecay = json.replace("\"20s\"}", "\"20s\", \"ejection_decay\": \"2m\"}");
        assertThat(ConfigLoader.parse(withDecay, "t.json").config().cluster("api").outlier().ejectionDecay())
                .isEqualTo(Duration.ofMinutes(2));
        assertThat(error(withDecay.replace("\"2m\"", "\"0s\""))).startsWith("$.clusters[0].outlier.ejection_decay:");
    }

    private static String withHttp(String http) {
        return MIN.replace("\"port\": 8080,", "\"port\": 8080, \"http\": " + http + ",");
    }

    @Test
    void httpHardeningOptionsAreReadWithDefaults() {
        HttpOptions d = nat(MIN).listeners().get(0).http();
        assertThat(d.trustedProxies()).isEmpty();
        assertThat(d.path()).isEqualTo(PathOptions.defaults());
        assertThat(d.maxResponseHeaderSize()).isEqualTo(65536);

        HttpOptions h = nat(withHttp("""
                {"trusted_proxies": ["10.0.0.0/8", "192.168.1.7", "fd00::/8", "::1"],
                 "path": {"escaped_slashes": "decode", "merge_slashes": true},
                 "max_response_header_size": "128KiB"}""")).listeners().get(0).http();
        assertThat(h.trustedProxies()).extracting(Object::toString)
                .containsExactly("10.0.0.0/8", "192.168.1.7/32", "fd00:0:0:0:0:0:0:0/8", "0:0:0:0:0:0:0:1/128");
        assertThat(h.trusts(new byte[] {10, 9, 8, 7})).isTrue();
        assertThat(h.trusts(new byte[] {11, 0, 0, 1})).isFalse();
        assertThat(h.trusts(new byte[] {(byte) 192, (byte) 168, 1, 7})).isTrue();
        assertThat(h.trusts(new byte[] {(byte) 192, (byte) 168, 1, 8})).isFalse();
        byte[] v6 = new byte[16];
        v6[0] = (byte) 0xfd;
        v6[15] = 5;
        assertThat(h.trusts(v6)).isTrue();
        v6[0] = (byte) 0xfe;
        assertThat(h.trusts(v6)).isFalse();
        assertThat(h.path().escapedSlashes()).isEqualTo(PathOptions.EscapedSlashes.DECODE);
        assertThat(h.path().mergeSlashes()).isTrue();
        assertThat(h.maxResponseHeaderSize()).isEqualTo(128 << 10);
    }

    @Test
    void badHttpHardeningOptionsNameTheirPath() {
        assertThat(error(withHttp("{\"trusted_proxies\": [\"10.0.0.0/8\", \"proxy.internal\"]}")))
                .startsWith("$.listeners[0].http.trusted_proxies[1]: bad value \"proxy.internal\"; expected an IP address or CIDR range");
        assertThat(error(withHttp("{\"trusted_proxies\": [\"10.0.0.0/33\"]}")))
                .contains("$.listeners[0].http.trusted_proxies[0]").contains("prefix length 33 is over 32");
        assertThat(error(withHttp("{\"trusted_proxies\": [\"10.1.1\"]}"))).contains("trusted_proxies[0]");
        assertThat(error(withHttp("{\"trusted_proxies\": [8]}"))).contains("trusted_proxies[0]: bad value \"8\"");
        assertThat(error(withHttp("{\"path\": {\"escaped_slashes\": \"allow\"}}")))
                .isEqualTo("$.listeners[0].http.path.escaped_slashes: bad value \"allow\"; expected \"reject\", \"keep\" or \"decode\"");
        assertThat(error(withHttp("{\"path\": {\"merge_slashes\": \"yes\"}}")))
                .startsWith("$.listeners[0].http.path.merge_slashes: bad value");
        assertThat(error(withHttp("{\"max_response_header_size\": 100}")))
                .contains("max_response_header_size");
    }
}
