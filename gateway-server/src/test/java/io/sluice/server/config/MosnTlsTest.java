package io.sluice.server.config;

import io.sluice.core.config.ConfigException;
import io.sluice.core.config.GatewayConfig;
import io.sluice.core.config.UpstreamTlsConfig;
import io.sluice.server.testing.TestPki;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** MOSN {@code tls_context} on clusters mapped to the upstream TLS block (and what cannot be mapped). */
class MosnTlsTest {

    @TempDir
    Path dir;

    private static String mosn(String clusterExtra, String cmExtra) {
        return """
                {"servers": [{"listeners": [{"name": "l", "address": "127.0.0.1:2046",
                   "filter_chains": [{"filters": [{"type": "proxy", "config": {"downstream_protocol": "Http1",
                     "upstream_protocol": "Http1", "router_config_name": "r"}}]}]}],
                  "routers": [{"router_config_name": "r", "virtual_hosts": [{"name": "v", "domains": ["*"],
                     "routers": [{"match": {"prefix": "/"}, "route": {"cluster_name": "c"}}]}]}]}],
                 "cluster_manager": {%s "clusters": [{"name": "c", %s "hosts": [{"address": "127.0.0.1:8443"}]}]}}
                """.formatted(cmExtra, clusterExtra);
    }

    private static String path(Path p) {
        return p.toString().replace("\\", "\\\\");
    }

    @Test
    void aClusterTlsContextBecomesTheUpstreamTlsBlock() {
        TestPki pki = TestPki.create(dir, "mosn");
        TestPki.Leaf client = pki.leaf("client", "gw.internal");
        String tls = """
                "tls_context": {"status": true, "server_name": "api.internal", "ca_cert": "%s",
                  "cert_chain": "%s", "private_key": "%s", "min_version": "TLS1_2", "max_version": "TLS1_3",
                  "cipher_suites": "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256", "alpn": ""},
                """.formatted(path(pki.caFile()), path(client.certFile()), path(client.keyFile()));
        GatewayConfig c = ConfigLoader.parse(mosn(tls, ""), "m.json").config();
        UpstreamTlsConfig t = c.cluster("c").tls();
        assertThat(t.verify()).isTrue();
        assertThat(t.sni()).isEqualTo("api.internal");
        assertThat(t.caFile()).isEqualTo(pki.caFile().toString());
        assertThat(t.certFile()).isEqualTo(client.certFile().toString());
        assertThat(t.keyFile()).isEqualTo(client.keyFile().toString());
        assertThat(t.protocols()).containsExactly("TLSv1.3", "TLSv1.2");
        assertThat(t.ciphers()).containsExactly("ECDHE-ECDSA-AES128-GCM-SHA256", "ECDHE-RSA-AES128-GCM-SHA256");
    }

    @Test
    void insecureSkipTurnsVerificationOffAndStatusFalseIsCleartext() {
        assertThat(ConfigLoader.parse(mosn("\"tls_context\": {\"status\": true, \"insecure_skip\": true, \"min_version\": \"TLS1_3\"},", ""),
                "m.json").config().cluster("c").tls()).satisfies(t -> {
                    assertThat(t.verify()).isFalse();
                    assertThat(t.protocols()).containsExactly("TLSv1.3");
                });
        assertThat(ConfigLoader.parse(mosn("\"tls_context\": {\"status\": false, \"ca_cert\": \"whatever\"},", ""), "m.json")
                .config().cluster("c").tls()).isNull();
    }

    @Test
    void theClusterManagerContextAppliesToClustersThatAskForIt() {
        TestPki pki = TestPki.create(dir, "mosn");
        String cm = "\"tls_context\": {\"status\": true, \"ca_cert\": \"" + path(pki.caFile()) + "\"},";
        GatewayConfig c = ConfigLoader.parse(mosn("\"cluster_manager_tls\": true,", cm), "m.json").config();
        assertThat(c.cluster("c").tls().caFile()).isEqualTo(pki.caFile().toString());
        assertThat(ConfigLoader.parse(mosn("", cm), "m.json").config().cluster("c").tls()).isNull();
        assertThatThrownBy(() -> ConfigLoader.parse(mosn("\"cluster_manager_tls\": true,", ""), "m.json"))
                .hasMessageContaining("$.cluster_manager.clusters[0].cluster_manager_tls");
    }

    @Test
    void whatCannotBeMappedIsAnErrorNamingItsPath() {
        String[][] cases = {
                {"\"tls_context\": {\"status\": true, \"ca_cert\": \"" + path(dir.resolve("none.pem")) + "\"},",
                        "$.cluster_manager.clusters[0].tls_context.ca_cert"},
                {"\"tls_context\": {\"status\": true, \"min_version\": \"TLS1_0\"},", "$.cluster_manager.clusters[0].tls_context.min_version"},
                {"\"tls_context\": {\"status\": true, \"alpn\": \"h2\"},", "$.cluster_manager.clusters[0].tls_context.alpn"},
                {"\"tls_context\": {\"status\": true, \"ecdh_curves\": \"P256\"},", "$.cluster_manager.clusters[0].tls_context.ecdh_curves"},
                {"\"tls_context\": {\"status\": true, \"verify_client\": true},", "$.cluster_manager.clusters[0].tls_context.verify_client"},
                {"\"tls_context\": {\"status\": true, \"sds_source\": {\"x\": 1}},", "$.cluster_manager.clusters[0].tls_context.sds_source"},
                {"\"tls_context\": {\"status\": true, \"bogus\": 1},", "$.cluster_manager.clusters[0].tls_context.bogus"},
        };
        for (String[] c : cases) {
            assertThatThrownBy(() -> ConfigLoader.parse(mosn(c[0], ""), "m.json")).as(c[0])
                    .isInstanceOf(ConfigException.class).hasMessageContaining(c[1]);
        }
        String hostOptOut = mosn("\"tls_context\": {\"status\": true},", "").replace("{\"address\": \"127.0.0.1:8443\"}",
                "{\"address\": \"127.0.0.1:8443\", \"tls_disable\": true}");
        assertThatThrownBy(() -> ConfigLoader.parse(hostOptOut, "m.json")).hasMessageContaining("hosts[0].tls_disable");
    }
}
