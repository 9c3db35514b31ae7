package io.sluice.server.config;

import io.sluice.core.config.ConfigException;
import io.sluice.core.config.DiscoveryConfig;
import io.sluice.core.config.GatewayConfig;
import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

/** The {@code discovery} block of a cluster in the native JSON format: keys, defaults, errors, /config round trip. */
class DiscoveryConfigLoaderTest {

    private static final String CFG = """
            {"listeners": [{"name": "rpc", "protocol": "bolt", "port": 12200, "bolt": {"default_cluster": "echo"}}],
             "clusters": [{"name": "echo", "protocol": "bolt", "discovery": %s}]}""";

    private static GatewayConfig load(String discovery) {
        return ConfigLoader.parse(CFG.formatted(discovery), "test.json").config();
    }

    private static String error(String discovery) {
        try {
            load(discovery);
        } catch (ConfigException e) {
            return e.getMessage();
        }
        throw new AssertionError("no error for " + discovery);
    }

    @Test
    void zookeeperWithDefaultsAndEveryKey() {
        DiscoveryConfig d = load("""
                {"type": "zookeeper", "address": "127.0.0.1:2181/team1", "service": "com.example.EchoService:1.0"}""")
                .clusters().get(0).discovery();
        assertThat(d).isEqualTo(DiscoveryConfig.zookeeper("127.0.0.1:2181/team1", "com.example.EchoService:1.0"));
        assertThat(d.protocol()).isEqualTo("bolt");
        assertThat(d.sessionTimeout()).isEqualTo(Duration.ofSeconds(30));
        assertThat(d.connectionTimeout()).isEqualTo(Duration.ofSeconds(10));
        assertThat(d.flapGrace()).isEqualTo(Duration.ofSeconds(30));
        assertThat(d.allowEmpty()).isFalse();
        assertThat(d.initialFetchTimeout()).isEqualTo(Duration.ofSeconds(5));

        GatewayConfig all = load("""
                {"type": "zookeeper", "address": "zk1:2181,zk2:2181", "service": "a.B:2.0:u1", "protocol": "bolt",
                 "session_timeout": "20s", "connection_timeout": "5s", "allow_empty": true, "flap_grace": "1m",
                 "initial_fetch_timeout": "1500ms"}""");
        DiscoveryConfig a = all.clusters().get(0).discovery();
        assertThat(a.initialFetchTimeout()).isEqualTo(Duration.ofMillis(1500));
        assertThat(error("""
                {"type": "custom", "source": "x", "initial_fetch_timeout": "-1s"}""")).contains("initial_fetch_timeout");
        assertThat(a.sessionTimeout()).isEqualTo(Duration.ofSeconds(20));
        assertThat(a.flapGrace()).isEqualTo(Duration.ofMinutes(1));
        assertThat(a.allowEmpty()).isTrue();
        // GET /config renders it so that it loads back
        assertThat(ConfigLoader.parse(ConfigJson.render(all), "config.json").config()).isEqualTo(all);
    }

    @Test
    void customSource() {
        assertThat(load("{\"type\": \"custom\", \"source\": \"mine\"}").clusters().get(0).discovery())
                .isEqualTo(DiscoveryConfig.custom("mine"));
    }

    @Test
    void routeByRegistry() {
        GatewayConfig c = load("""
                {"type": "zookeeper", "address": "zk:2181", "service": "*", "max_services": 8, "idle_timeout": "5m"}""");
        DiscoveryConfig d = c.clusters().get(0).discovery();
        assertThat(d.routesByService()).isTrue();
        assertThat(d.maxServices()).isEqualTo(8);
        assertThat(d.idleTimeout()).isEqualTo(Duration.ofMinutes(5));
        assertThat(DiscoveryConfig.zookeeper("zk:2181", "*").maxServices()).isEqualTo(64);
        assertThat(ConfigLoader.parse(ConfigJson.render(c), "config.json").config()).isEqualTo(c);
        assertThat(error("{\"type\": \"zookeeper\", \"address\": \"zk:2181\", \"service\": \"*\", \"max_services\": -1}"))
                .startsWith("$.clusters[0].discovery.max_services:");
    }

    @Test
    void dns() {
        GatewayConfig c = load("""
                {"type": "dns", "address": "svc.example.com:8080", "dns_server": "10.0.0.2:53",
                 "refresh_min": "2s", "refresh_max": "30s"}""");
        DiscoveryConfig d = c.clusters().get(0).discovery();
        assertThat(d).isEqualTo(DiscoveryConfig.dns("svc.example.com:8080", "10.0.0.2:53")
                .withRefresh(Duration.ofSeconds(2), Duration.ofSeconds(30)));
        assertThat(ConfigLoader.parse(ConfigJson.render(c), "config.json").config()).isEqualTo(c);
        assertThat(error("{\"type\": \"dns\", \"address\": \"svc.example.com\"}")).startsWith("$.clusters[0].discovery.address:");
        assertThat(error("{\"type\": \"dns\", \"address\": \"a:1\", \"dns_server\": \"x\"}"))
                .startsWith("$.clusters[0].discovery.dns_server:");
        assertThat(error("{\"type\": \"dns\", \"address\": \"a:1\", \"refresh_min\": \"10s\", \"refresh_max\": \"5s\"}"))
                .startsWith("$.clusters[0].discovery.refresh_max:");
    }

    @Test
    void errorsNameThePathAndTheValue() {
        assertThat(error("{\"type\": \"eureka\"}")).startsWith("$.clusters[0].discovery.type:").contains("eureka");
        assertThat(error("{\"type\": \"zookeeper\", \"service\": \"a.B:1.0\"}")).startsWith("$.clusters[0].discovery.address:");
        assertThat(error("{\"type\": \"zookeeper\", \"address\": \"h:1\", \"service\": \"a.B\"}"))
                .startsWith("$.clusters[0].discovery.service:").contains("interface:version");
        assertThat(error("{\"type\": \"zookeeper\", \"address\": \"h:1\", \"service\": \"a.B:1\", \"sesion_timeout\": \"1s\"}"))
                .startsWith("$.clusters[0].discovery.sesion_timeout:").contains("session_timeout");
        assertThat(error("{\"type\": \"zookeeper\", \"address\": \"h:1\", \"service\": \"a.B:1\", \"flap_grace\": \"soon\"}"))
                .startsWith("$.clusters[0].discovery.flap_grace:");
        assertThat(error("{\"type\": \"custom\"}")).startsWith("$.clusters[0].discovery.source:");
    }

    @Test
    void nacosWithDefaultsAndEveryKey() {
        DiscoveryConfig d = load("""
                {"type": "nacos", "address": "127.0.0.1:8848", "service": "com.example.EchoService:1.0"}""")
                .clusters().get(0).discovery();
        assertThat(d).isEqualTo(DiscoveryConfig.nacos("127.0.0.1:8848", "com.example.EchoService:1.0",
                io.sluice.core.config.NacosOptions.defaults()));
        assertThat(d.nacos().namespace()).isEqualTo("sofa-rpc");
        assertThat(d.nacos().group()).isEqualTo("DEFAULT_GROUP");
        assertThat(d.nacos().clusters()).containsExactly("default-cluster");
        assertThat(d.nacos().pollInterval()).isEqualTo(Duration.ofSeconds(2));
        assertThat(d.nacos().healthyOnly()).isTrue();

        GatewayConfig all = load("""
                {"type": "nacos", "address": "n1:8848,n2:8848", "service": "a.B:2.0:u1", "namespace": "prod",
                 "group": "G", "clusters": ["c1", "c2"], "poll_interval": "1s", "healthy_only": false,
                 "connection_timeout": "2s", "allow_empty": true}""");
        DiscoveryConfig a = all.clusters().get(0).discovery();
        assertThat(a.nacos().namespace()).isEqualTo("prod");
        assertThat(a.nacos().clusters()).containsExactly("c1", "c2");
        assertThat(a.nacos().pollInterval()).isEqualTo(Duration.ofSeconds(1));
        assertThat(a.nacos().healthyOnly()).isFalse();
        assertThat(ConfigLoader.parse(ConfigJson.render(all), "config.json").config()).isEqualTo(all);

        GatewayConfig secret = load("""
                {"type": "nacos", "address": "n1:8848", "service": "*", "username": "gw", "password": "s3cret"}""");
        assertThat(secret.clusters().get(0).discovery().nacos().password()).isEqualTo("s3cret");
        assertThat(ConfigJson.render(secret)).doesNotContain("s3cret").contains("\"password\" : \"***\"");
        assertThat(secret.clusters().get(0).discovery().nacos().toString()).doesNotContain("s3cret");
    }

    @Test
    void nacosErrorsNameTheJsonPath() {
        assertThat(error("""
                {"type": "nacos", "address": "n1:8848", "service": "a.B:1.0", "poll_interval": "50ms"}"""))
                .contains("clusters[0].discovery.poll_interval").contains("50ms");
        assertThat(error("""
                {"type": "nacos", "address": "n1:8848", "service": "a.B:1.0", "username": "gw"}"""))
                .contains("clusters[0].discovery.password");
        assertThat(error("""
                {"type": "nacos", "address": "n1", "service": "a.B:1.0"}""")).contains("clusters[0].discovery.address");
        assertThat(error("""
                {"type": "nacos", "address": "n1:8848", "service": "*", "service_name": "orders"}"""))
                .contains("clusters[0].discovery.service_name").contains("orders");
        assertThat(error("""
                {"type": "nacos", "address": "n1:8848", "service": "EchoService"}""")).contains("clusters[0].discovery.service");
        assertThat(error("""
                {"type": "nacos", "address": "n1:8848", "service": "a.B:1.0", "clusters": ["a,b"]}"""))
                .contains("clusters[0].discovery.clusters");
        assertThat(error("""
                {"type": "zookeeper", "address": "zk:2181", "service": "a.B:1.0", "namespace": "x"}"""))
                .contains("clusters[0].discovery.namespace").contains("nacos");
        assertThat(error("""
                {"type": "zookeeper", "address": "zk:2181", "service": "a.B:1.0", "password": "hush"}"""))
                .contains("clusters[0].discovery.password").doesNotContain("hush");
        assertThat(error("""
                {"type": "nacos", "address": "n1:8848", "service": "a.B:1.0", "poll_intervall": "1s"}"""))
                .contains("poll_interval");
    }
}
