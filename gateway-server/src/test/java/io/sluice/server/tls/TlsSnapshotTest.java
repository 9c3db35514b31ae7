package io.sluice.server.tls;

import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslProvider;
import io.sluice.core.config.CertificateConfig;
import io.sluice.core.config.ConfigException;
import io.sluice.core.config.TlsConfig;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Loading certificates: SNI mapping, validation errors naming the field and file. */
class TlsSnapshotTest {

    @TempDir
    static Path dir;
    static TestPki pki;
    static TestPki.Leaf a;
    static TestPki.Leaf wild;
    static TestPki.Leaf expired;

    @BeforeAll
    static void pki() {
        pki = TestPki.ca(dir, "snap");
        a = pki.leaf("a", "a.test", 5, "DNS:a.test");
        wild = pki.leaf("w", "w.test", 5, "DNS:*.w.test");
        expired = pki.leaf("old", "old.test", -1, "DNS:old.test");
    }

    static CertificateConfig pem(TestPki.Leaf l, String... names) {
        return CertificateConfig.pem(l.chain().toString(), l.key().toString(), names);
    }

    @Test
    void exactThenOneLabelWildcardElseTheFirstCertificate() {
        TlsSnapshot s = TlsSnapshot.load(TlsConfig.builder().certificates(pem(a, "a.test"), pem(wild, "*.w.test")).build(),
                SslProvider.JDK, null);
        SslContext def = s.contexts().get(0);
        SslContext w = s.contexts().get(1);
        assertThat(s.select("a.test")).isSameAs(def);
        assertThat(s.select("x.w.test")).isSameAs(w);
        assertThat(s.select("X.W.TEST")).isSameAs(w);
        assertThat(s.select("y.x.w.test")).isSameAs(def);
        assertThat(s.select("w.test")).isSameAs(def);
        assertThat(s.select(null)).isSameAs(def);
        assertThat(s.loaded()).extracting(TlsSnapshot.Loaded::subject).containsExactly("CN=a.test", "CN=w.test");
    }

    @Test
    void openSslContextsKeepNoServerSessionCache() {
        org.junit.jupiter.api.Assumptions.assumeTrue(io.netty.handler.ssl.OpenSsl.isAvailable());
        TlsSnapshot s = TlsSnapshot.load(TlsConfig.builder().certificates(pem(a, "a.test")).build(), SslProvider.OPENSSL, null);
        // resumption is by stateless tickets; a cache made BoringSSL call into Java on every full handshake
        assertThat(((io.netty.handler.ssl.OpenSslSessionContext) s.contexts().get(0).sessionContext()).isSessionCacheEnabled())
                .isFalse();
    }

    @Test
    void aKeyThatDoesNotMatchItsChainIsRejectedNamingTheKeyFile() {
        TlsConfig c = TlsConfig.builder().certificates(pem(a), CertificateConfig.pem(wild.chain().toString(), a.key().toString()))
                .build();
        assertThatThrownBy(() -> TlsSnapshot.load(c, SslProvider.JDK, null)).isInstanceOf(ConfigException.class)
                .satisfies(e -> {
                    ConfigException ce = (ConfigException) e;
                    assertThat(ce.path()).isEqualTo("tls.certificates[1].private_key");
                    assertThat(ce.value()).isEqualTo(a.key().toString());
                    assertThat(ce.getMessage()).contains("does not match");
                });
    }

    @Test
    void anExpiredCertificateIsRejected() {
        TlsConfig c = TlsConfig.builder().certificates(pem(expired)).build();
        assertThatThrownBy(() -> TlsSnapshot.load(c, SslProvider.JDK, null)).isInstanceOf(ConfigException.class)
                .hasMessageContaining("tls.certificates[0].cert_chain").hasMessageContaining("expired");
    }

    @Test
    void aWrongPkcs12PasswordIsRejectedAndTheRightOneLoads() {
        Path p12 = a.pkcs12("secret");
        TlsConfig bad = TlsConfig.builder().certificates(new CertificateConfig(null, null, p12.toString(), "wrong",
                java.util.List.of())).build();
        assertThatThrownBy(() -> TlsSnapshot.load(bad, SslProvider.JDK, null)).isInstanceOf(ConfigException.class)
                .hasMessageContaining("tls.certificates[0].password").hasMessageContaining(p12.toString());
        TlsConfig good = TlsConfig.builder().certificates(new CertificateConfig(null, null, p12.toString(), "secret",
                java.util.List.of())).build();
        assertThat(TlsSnapshot.load(good, SslProvider.JDK, null).loaded().get(0).subject()).isEqualTo("CN=a.test");
    }

    @Test
    void aHalfWrittenChainIsRejected() throws Exception {
        Path half = dir.resolve("half.pem");
        String text = java.nio.file.Files.readString(a.chain());
        java.nio.file.Files.writeString(half, text.substring(0, text.length() / 3));
        TlsConfig c = TlsConfig.builder().certificates(CertificateConfig.pem(half.toString(), a.key().toString())).build();
        assertThatThrownBy(() -> TlsSnapshot.load(c, SslProvider.JDK, null)).isInstanceOf(ConfigException.class)
                .hasMessageContaining("tls.certificates[0].cert_chain");
    }
}
