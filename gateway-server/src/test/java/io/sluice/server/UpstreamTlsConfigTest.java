package io.sluice.server;

import io.sluice.core.config.ClusterConfig;
import io.sluice.core.config.ConfigException;
import io.sluice.core.config.UpstreamTlsConfig;
import io.sluice.server.config.ConfigLoader;
import io.sluice.server.testing.TestPki;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The cluster {@code tls} block of the native format: keys, defaults, and the errors (exit 2) bad files give. */
class UpstreamTlsConfigTest {

    @TempDir
    Path dir;

    private TestPki pki;
    private TestPki.Leaf leaf;

    @BeforeEach
    void pki() {
        pki = TestPki.create(dir, "cfg");
        leaf = pki.leaf("client", "gw.internal");
    }

    private static String config(String tls) {
        return """
                {"listeners": [{"name": "web", "port": 0, "routes": [{"cluster": "c"}]}],
                 "clusters": [{"name": "c", "hosts": ["127.0.0.1:8443"], "tls": %s}]}
                """.formatted(tls);
    }

    private static String json(Object s) {
        return "\"" + s.toString().replace("\\", "\\\\") + "\"";
    }

    private static ClusterConfig cluster(String tls) {
        return ConfigLoader.parse(config(tls), "t.json").config().clusters().get(0);
    }

    private static ConfigException error(String tls) {
        try {
            cluster(tls);
        } catch (ConfigException e) {
            return e;
        }
        throw new AssertionError("no ConfigException for " + tls);
    }

    @Test
    void everyKeyIsRead() {
        ClusterConfig c = cluster("""
                {"verify": true, "ca_file": %s, "sni": "api.internal", "verify_host": false,
                 "cert_file": %s, "key_file": %s, "protocols": ["TLSv1.3"],
                 "ciphers": ["TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256"], "provider": "jdk"}
                """.formatted(json(pki.caFile()), json(leaf.certFile()), json(leaf.keyFile())));
        UpstreamTlsConfig t = c.tls();
        assertThat(t.caFile()).isEqualTo(pki.caFile().toString());
        assertThat(t.sni()).isEqualTo("api.internal");
        assertThat(t.verifyHost()).isFalse();
        assertThat(t.certFile()).isEqualTo(leaf.certFile().toString());
        assertThat(t.protocols()).containsExactly("TLSv1.3");
        assertThat(t.ciphers()).containsExactly("TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256");
        assertThat(t.provider()).isEqualTo("jdk");
    }

    @Test
    void anEmptyBlockIsVerifiedTlsAgainstTheSystemStoreAndNoBlockIsCleartext() {
        assertThat(cluster("{}").tls()).isEqualTo(UpstreamTlsConfig.defaults());
        assertThat(UpstreamTlsConfig.defaults().verify()).isTrue();
        assertThat(UpstreamTlsConfig.defaults().verifyHost()).isTrue();
        assertThat(UpstreamTlsConfig.defaults().protocols()).containsExactly("TLSv1.3", "TLSv1.2");
        assertThat(cluster("null").tls()).isNull();
    }

    @Test
    void badValuesNameTheirJsonPath() {
        assertThat(error("{\"ca_file\": " + json(dir.resolve("missing.pem")) + "}").path()).isEqualTo("$.clusters[0].tls.ca_file");
        assertThat(error("{\"ca_file\": " + json(dir.resolve("missing.pem")) + "}").getMessage()).contains("no such file");
        assertThat(error("{\"verfy\": false}").getMessage()).contains("$.clusters[0].tls.verfy", "did you mean \"verify\"");
        assertThat(error("{\"protocols\": [\"TLSv1.1\"]}").path()).isEqualTo("$.clusters[0].tls.protocols[0]");
        assertThat(error("{\"cert_file\": " + json(leaf.certFile()) + "}").path()).isEqualTo("$.clusters[0].tls.key_file");
        assertThat(error("{\"provider\": \"gnutls\"}").path()).isEqualTo("$.clusters[0].tls.provider");
        assertThat(error("{\"sni\": \"api.internal:443\"}").path()).isEqualTo("$.clusters[0].tls.sni");
    }

    @Test
    void aKeyThatDoesNotMatchTheCertificateIsAConfigError() {
        TestPki.Leaf other = pki.leaf("other", "x.internal");
        ConfigException e = error("{\"cert_file\": %s, \"key_file\": %s}".formatted(json(leaf.certFile()), json(other.keyFile())));
        assertThat(e.path()).isEqualTo("$.clusters[0].tls.key_file");
        assertThat(e.getMessage()).contains("do not match");
        // the matching pair loads
        assertThat(cluster("{\"cert_file\": %s, \"key_file\": %s}".formatted(json(leaf.certFile()), json(leaf.keyFile())))
                .tls().hasClientCertificate()).isTrue();
    }

    @Test
    void aFileThatIsNoCertificateOrKeystoreIsAConfigError() throws Exception {
        Path junk = Files.writeString(dir.resolve("junk.pem"), "not a certificate");
        assertThat(error("{\"ca_file\": " + json(junk) + "}").path()).isEqualTo("$.clusters[0].tls.ca_file");
        assertThat(error("{\"pkcs12_file\": " + json(junk) + ", \"pkcs12_password\": \"x\"}").path())
                .isEqualTo("$.clusters[0].tls.pkcs12_file");
        Path p12 = leaf.pkcs12("right");
        assertThat(error("{\"pkcs12_file\": " + json(p12) + ", \"pkcs12_password\": \"wrong\"}").path())
                .isEqualTo("$.clusters[0].tls.pkcs12_file");
        assertThat(cluster("{\"pkcs12_file\": " + json(p12) + ", \"pkcs12_password\": \"right\"}").tls().pkcs12File())
                .isEqualTo(p12.toString());
    }

    @Test
    void theCliExitsWith2OnAMissingCaFile() throws Exception {
        Path cfg = Files.writeString(dir.resolve("sluice.json"), config("{\"ca_file\": " + json(dir.resolve("nope.pem")) + "}"));
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code = Main.run(new String[] {"--check", "-c", cfg.toString()}, new PrintStream(new ByteArrayOutputStream()),
                new PrintStream(err, true, StandardCharsets.UTF_8));
        assertThat(code).isEqualTo(2);
        assertThat(err.toString(StandardCharsets.UTF_8)).contains("$.clusters[0].tls.ca_file");
    }

    @Test
    void embeddersGetTheSameErrorsWhenTheGatewayBuildsTheContexts() {
        ClusterConfig c = ClusterConfig.builder().name("c").tls(UpstreamTlsConfig.builder().caFile(dir.resolve("gone.pem").toString()).build())
                .build();
        io.sluice.server.tls.upstream.UpstreamTlsContexts contexts = new io.sluice.server.tls.upstream.UpstreamTlsContexts(null);
        assertThatThrownBy(() -> contexts.apply(List.of(c))).isInstanceOf(ConfigException.class)
                .hasMessageContaining("$.clusters[0].tls.ca_file");
        assertThat(contexts.current()).isEmpty();
    }

    @Test
    void cipherNamesTheProviderDoesNotKnowFailWhenTheContextIsBuilt() {
        for (String provider : List.of("auto", "jdk")) {
            ClusterConfig c = ClusterConfig.builder().name("c").tls(UpstreamTlsConfig.builder().provider(provider)
                    .ciphers(List.of("NO-SUCH-CIPHER")).build()).build();
            io.sluice.server.tls.upstream.UpstreamTlsContexts contexts = new io.sluice.server.tls.upstream.UpstreamTlsContexts(null);
            assertThatThrownBy(() -> contexts.apply(List.of(c))).as(provider).isInstanceOf(ConfigException.class)
                    .hasMessageContaining("$.clusters[0].tls.ciphers");
        }
    }
}
