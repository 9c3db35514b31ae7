package io.sluice.server.tls;

import io.sluice.core.config.ConfigException;
import io.sluice.core.config.GatewayConfig;
import io.sluice.core.config.Protocol;
import io.sluice.core.config.TlsConfig;
import io.sluice.server.config.ConfigLoader;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The native {@code tls} block and MOSN's {@code tls_context}: keys, defaults, and file errors naming path and file. */
class TlsConfigTest {

    @TempDir
    static Path dir;
    static TestPki.Leaf a;
    static TestPki.Leaf b;
    static TestPki pki;

    @BeforeAll
    static void pki() {
        pki = TestPki.ca(dir, "cfg");
        a = pki.leaf("a", "a.test", 5, "DNS:a.test");
        b = pki.leaf("b", "b.test", 5, "DNS:b.test");
    }

    static String nativeConfig(String tls) {
        return """
                {"clusters": [{"name": "c", "hosts": [{"address": "127.0.0.1:9"}]}],
                 "listeners": [{"name": "web", "port": 0, "protocol": "http", "routes": [{"cluster": "c"}],
                   "tls": %s}]}""".formatted(tls);
    }

    static String pem(TestPki.Leaf l) {
        return "{\"cert_chain\": \"" + l.chain() + "\", \"private_key\": \"" + l.key() + "\"";
    }

    // http2: without HTTP/2 on the listener the default ALPN is http/1.1 alone; an explicit list is kept
    @Test
    void defaultAlpnOffersH2OnlyWhileTheListenerAcceptsHttp2() {
        String off = """
                {"clusters": [{"name": "c", "hosts": [{"address": "127.0.0.1:9"}]}],
                 "listeners": [{"name": "web", "port": 0, "protocol": "http", "routes": [{"cluster": "c"}],
                   "http": {"http2": {"enabled": false}},
                   "tls": {"certificates": [%s}]}}]}""".formatted(pem(a));
        assertThat(ConfigLoader.parse(off, "t").config().listeners().get(0).tls().alpn()).containsExactly("http/1.1");
        String explicit = nativeConfig("{\"certificates\": [%s}], \"alpn\": [\"http/1.1\"]}".formatted(pem(a)));
        assertThat(ConfigLoader.parse(explicit, "t").config().listeners().get(0).tls().alpn()).containsExactly("http/1.1");
    }

    @Test
    void theNativeBlockReadsEveryKeyAndDefaultsTheRest() {
        GatewayConfig c = ConfigLoader.parse(nativeConfig("""
                {"certificates": [%s}, %s, "server_names": ["b.test", "*.b.test"]}],
                 "protocols": ["TLSv1.3"], "client_auth": "optional", "client_ca": "%s", "handshake_timeout": "3s",
                 "forward_identity": true, "identity_header": "X-Client-Id", "session_tickets": false,
                 "watch_interval": "250ms"}""".formatted(pem(a), pem(b), pki.caCert())), "t").config();
        TlsConfig t = c.listeners().get(0).tls();
        assertThat(t.certificates()).hasSize(2);
        assertThat(t.certificates().get(1).serverNames()).containsExactly("b.test", "*.b.test");
        assertThat(t.protocols()).containsExactly("TLSv1.3");
        assertThat(t.alpn()).containsExactly("h2", "http/1.1"); // http2: h2 first while the listener accepts HTTP/2
        assertThat(t.clientAuth()).isEqualTo(TlsConfig.ClientAuth.OPTIONAL);
        assertThat(t.handshakeTimeout()).isEqualTo(Duration.ofSeconds(3));
        assertThat(t.identityHeader()).isEqualTo("x-client-id");
        assertThat(t.forwardIdentity()).isTrue();
        assertThat(t.sessionTickets()).isFalse();
        assertThat(t.watchInterval()).isEqualTo(Duration.ofMillis(250));
        TlsConfig d = ConfigLoader.parse(nativeConfig("{\"certificates\": [" + pem(a) + "}]}"), "t").config()
                .listeners().get(0).tls();
        assertThat(d).isEqualTo(TlsConfig.builder().certificates(d.certificates()).alpn(List.of("h2", "http/1.1")).build()); // http2
    }

    @Test
    void aKeyOfAnotherCertificateIsAConfigErrorNamingTheJsonPathAndTheFile() {
        String bad = "{\"certificates\": [{\"cert_chain\": \"" + a.chain() + "\", \"private_key\": \"" + b.key() + "\"}]}";
        assertThatThrownBy(() -> ConfigLoader.parse(nativeConfig(bad), "t")).isInstanceOf(ConfigException.class)
                .hasMessageContaining("$.listeners[0].tls.certificates[0].private_key")
                .hasMessageContaining(b.key().toString());
    }

    @Test
    void unknownKeysAndBadValuesNameTheirPath() {
        assertThatThrownBy(() -> ConfigLoader.parse(nativeConfig("{\"certificates\": [" + pem(a) + "}], \"protocol\": []}"), "t"))
                .hasMessageContaining("$.listeners[0].tls.protocol");
        assertThatThrownBy(() -> ConfigLoader.parse(nativeConfig("{\"certificates\": [" + pem(a) + "}], \"protocols\": [\"TLSv1.1\"]}"), "t"))
                .hasMessageContaining("$.listeners[0].tls.protocols[0]").hasMessageContaining("TLSv1.1");
        assertThatThrownBy(() -> ConfigLoader.parse(nativeConfig("{\"certificates\": [" + pem(a) + "}], \"client_auth\": \"require\"}"), "t"))
                .hasMessageContaining("$.listeners[0].tls.client_ca");
        assertThatThrownBy(() -> ConfigLoader.parse(nativeConfig("{\"certificates\": []}"), "t"))
                .hasMessageContaining("$.listeners[0].tls.certificates");
        assertThatThrownBy(() -> ConfigLoader.parse(nativeConfig("{\"certificates\": [" + pem(a) + "}], \"allow_plaintext\": true}"), "t"))
                .hasMessageContaining("$.listeners[0].tls.allow_plaintext");
    }

    static String mosn(String tlsContext) {
        return """
                {"servers": [{"listeners": [{"name": "m", "address": "127.0.0.1:2047", "bind_port": true,
                   "filter_chains": [{"tls_context": %s,
                     "filters": [{"type": "proxy", "config": {"downstream_protocol": "Http1", "upstream_protocol": "Http1",
                                  "router_config_name": "r"}}]}]}],
                  "routers": [{"router_config_name": "r", "virtual_hosts": [{"name": "v", "domains": ["*"],
                     "routers": [{"match": {"prefix": "/"}, "route": {"cluster_name": "c"}}]}]}]}],
                 "cluster_manager": {"clusters": [{"name": "c", "type": "SIMPLE", "lb_type": "LB_ROUNDROBIN",
                   "hosts": [{"address": "127.0.0.1:9"}]}]}}""".formatted(tlsContext);
    }

    @Test
    void mosnTlsContextMapsToTheListenersTls() {
        GatewayConfig c = ConfigLoader.parse(mosn("""
                {"status": true, "cert_chain": "%s", "private_key": "%s", "server_name": "a.test", "ca_cert": "%s",
                 "verify_client": true, "require_client_cert": true, "min_version": "TLSv1_3", "max_version": "TLSv1_3",
                 "cipher_suites": "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256", "alpn": "http/1.1"}"""
                .formatted(a.chain(), a.key(), pki.caCert())), "m").config();
        TlsConfig t = c.listeners().get(0).tls();
        assertThat(c.listeners().get(0).protocol()).isEqualTo(Protocol.HTTP);
        assertThat(t.certificates().get(0).serverNames()).containsExactly("a.test");
        assertThat(t.clientAuth()).isEqualTo(TlsConfig.ClientAuth.REQUIRE);
        assertThat(t.protocols()).containsExactly("TLSv1.3");
        assertThat(t.cipherSuites()).hasSize(2);
        assertThat(t.alpn()).isEqualTo(List.of("http/1.1"));
        assertThat(ConfigLoader.parse(mosn("{\"status\": false}"), "m").config().listeners().get(0).tls()).isNull();
        assertThatThrownBy(() -> ConfigLoader.parse(mosn("{\"status\": true, \"cert_chain\": \"-----BEGIN CERTIFICATE-----x\","
                + " \"private_key\": \"k\"}"), "m")).hasMessageContaining("tls_context.cert_chain").hasMessageContaining("inline PEM");
        assertThatThrownBy(() -> ConfigLoader.parse(mosn("{\"status\": true, \"cert_chain\": \"" + a.chain()
                + "\", \"private_key\": \"" + b.key() + "\"}"), "m"))
                .hasMessageContaining("$.servers[0].listeners[0].filter_chains[0].tls_context.private_key: bad value \"" + b.key())
                .hasMessageContaining("does not match");
    }
}
