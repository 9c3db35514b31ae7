package io.sluice.server.tls;

import io.sluice.core.config.AdminConfig;
import io.sluice.core.config.CertificateConfig;
import io.sluice.core.config.ClusterConfig;
import io.sluice.core.config.GatewayConfig;
import io.sluice.core.config.HostConfig;
import io.sluice.core.config.ListenerConfig;
import io.sluice.core.config.RouteConfig;
import io.sluice.core.config.TlsConfig;
import io.sluice.core.config.TransportConfig;
import io.sluice.server.Gateway;
import io.sluice.server.testing.GatewayFixture;
import io.sluice.server.testing.TestBackend;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import javax.net.ssl.SSLSocket;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Rotation on a running gateway, the way Kubernetes mounts a secret: the files sit behind a
 * {@code ..data} directory symlink that is swapped atomically. New handshakes get the new
 * certificate; a connection opened before keeps working.
 */
class CertificateRotationIT {

    @TempDir
    Path dir;

    static SSLSocket open(int port, Path ca) throws Exception {
        SSLSocket s = (SSLSocket) TestPki.trusting(ca).getSocketFactory().createSocket("127.0.0.1", port);
        s.setSoTimeout(5000);
        s.startHandshake();
        return s;
    }

    static String subject(SSLSocket s) throws Exception {
        return ((X509Certificate) s.getSession().getPeerCertificates()[0]).getSubjectX500Principal().getName();
    }

    static String exchange(SSLSocket s) throws Exception {
        s.getOutputStream().write("GET /r HTTP/1.1\r\nHost: x\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
        InputStream in = s.getInputStream();
        byte[] buf = new byte[4096];
        int n = in.read(buf);
        return new String(buf, 0, n, StandardCharsets.ISO_8859_1);
    }

    @Test
    void aConfigReloadSwapsTheCertificatesAndABadPairKeepsTheRunningOnes() throws Exception {
        TestPki pki = TestPki.ca(dir, "reload");
        TestPki.Leaf v1 = pki.leaf("r1", "r1.test", 5, "IP:127.0.0.1");
        TestPki.Leaf v2 = pki.leaf("r2", "r2.test", 5, "IP:127.0.0.1");
        try (TestBackend web = TestBackend.start()) {
            java.util.function.Function<CertificateConfig, GatewayConfig> config = cert -> GatewayConfig.builder()
                    .listeners(ListenerConfig.builder().name("web").routes(RouteConfig.to("c"))
                            .tls(TlsConfig.builder().certificates(cert).watchFiles(false).build()).build())
                    .clusters(ClusterConfig.of("c", List.of(new HostConfig("127.0.0.1", web.port(), 1))))
                    .admin(AdminConfig.disabled()).transport(TransportConfig.builder().workerThreads(1).backlog(128).build())
                    .drainTimeout(Duration.ofSeconds(2)).build();
            Gateway gw = GatewayFixture.start(config.apply(CertificateConfig.pem(v1.chain().toString(), v1.key().toString())));
            try {
                gw.reload(config.apply(CertificateConfig.pem(v2.chain().toString(), v1.key().toString()))); // key of another cert
                try (SSLSocket s = open(gw.port("web"), pki.caCert())) {
                    assertThat(subject(s)).isEqualTo("CN=r1.test");
                }
                assertThat(gw.meterRegistry().find("sluice.tls.reloads").tags("outcome", "failure").counter().count())
                        .isEqualTo(1);
                gw.reload(config.apply(CertificateConfig.pem(v2.chain().toString(), v2.key().toString())));
                try (SSLSocket s = open(gw.port("web"), pki.caCert())) {
                    assertThat(subject(s)).isEqualTo("CN=r2.test");
                    assertThat(exchange(s)).startsWith("HTTP/1.1 200");
                }
            } finally {
                gw.shutdown().orTimeout(30, TimeUnit.SECONDS).join();
            }
        }
    }

    @Test
    void aSwappedSymlinkServesNewHandshakesTheNewCertificateAndOpenConnectionsKeepWorking() throws Exception {
        TestPki pki = TestPki.ca(dir, "k8s");
        TestPki.Leaf v1 = pki.leaf("v1", "v1.test", 5, "IP:127.0.0.1");
        TestPki.Leaf v2 = pki.leaf("v2", "v2.test", 5, "IP:127.0.0.1");
        Path secret = Files.createDirectories(dir.resolve("secret"));
        Path gen1 = Files.createDirectories(secret.resolve("..2026_1"));
        Files.copy(v1.chain(), gen1.resolve("tls.crt"));
        Files.copy(v1.key(), gen1.resolve("tls.key"));
        Files.createSymbolicLink(secret.resolve("..data"), gen1.getFileName());
        Files.createSymbolicLink(secret.resolve("tls.crt"), Path.of("..data/tls.crt"));
        Files.createSymbolicLink(secret.resolve("tls.key"), Path.of("..data/tls.key"));
        try (TestBackend web = TestBackend.start()) {
            TlsConfig tls = TlsConfig.builder().certificates(CertificateConfig.pem(secret.resolve("tls.crt").toString(),
                    secret.resolve("tls.key").toString())).watchInterval(Duration.ofMillis(100)).build();
            Gateway gw = GatewayFixture.start(GatewayConfig.builder()
                    .listeners(ListenerConfig.builder().name("web").routes(RouteConfig.to("c")).tls(tls).build())
                    .clusters(ClusterConfig.of("c", List.of(new HostConfig("127.0.0.1", web.port(), 1))))
                    .admin(AdminConfig.disabled()).transport(TransportConfig.builder().workerThreads(1).backlog(128).build())
                    .drainTimeout(Duration.ofSeconds(2)).build());
            try (SSLSocket before = open(gw.port("web"), pki.caCert())) {
                assertThat(subject(before)).isEqualTo("CN=v1.test");
                assertThat(exchange(before)).startsWith("HTTP/1.1 200");

                Path gen2 = Files.createDirectories(secret.resolve("..2026_2"));
                Files.copy(v2.chain(), gen2.resolve("tls.crt"));
                Files.copy(v2.key(), gen2.resolve("tls.key"));
                Path tmp = secret.resolve("..data_tmp");
                Files.createSymbolicLink(tmp, gen2.getFileName());
                Files.move(tmp, secret.resolve("..data"), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);

                await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(50)).until(() -> {
                    try (SSLSocket s = open(gw.port("web"), pki.caCert())) {
                        return subject(s).equals("CN=v2.test");
                    }
                });
                assertThat(exchange(before)).as("the connection opened before the rotation").startsWith("HTTP/1.1 200");
                assertThat(subject(before)).isEqualTo("CN=v1.test");
            } finally {
                gw.shutdown().orTimeout(30, TimeUnit.SECONDS).join();
            }
        }
    }
}
