package io.sluice.server.http2;

import io.sluice.core.config.AdminConfig;
import io.sluice.core.config.CertificateConfig;
import io.sluice.core.config.ClusterConfig;
import io.sluice.core.config.GatewayConfig;
import io.sluice.core.config.HostConfig;
import io.sluice.core.config.ListenerConfig;
import io.sluice.core.config.Protocol;
import io.sluice.core.config.RouteConfig;
import io.sluice.core.config.RouteMatch;
import io.sluice.core.config.TlsConfig;
import io.sluice.core.config.TransportConfig;
import io.sluice.server.Gateway;
import io.sluice.server.testing.GatewayFixture;
import io.sluice.server.testing.Ports;
import io.sluice.server.testing.RecordingBackend;
import io.sluice.server.tls.TestPki;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * HTTP/2 over TLS: a listener whose ALPN offers {@code h2} serves the JDK HttpClient and grpc-java
 * over HTTP/2 (ALPN-selected, no preface sniffing needed), proxied to an HTTP/1.1 upstream; a
 * listener offering only {@code http/1.1} keeps the same client on HTTP/1.1.
 */
class H2TlsAlpnIT {

    @TempDir
    static Path dir;
    static TestPki pki;
    static RecordingBackend backend;
    static Gateway gw;

    @BeforeAll
    static void start() throws Exception {
        pki = TestPki.ca(dir, "h2");
        TestPki.Leaf cert = pki.leaf("gw", "gateway.test", 10, "DNS:gateway.test", "IP:127.0.0.1");
        backend = new RecordingBackend();
        TlsConfig h2 = TlsConfig.builder()
                .certificates(CertificateConfig.pem(cert.chain().toString(), cert.key().toString(), "gateway.test"))
                .alpn(List.of("h2", "http/1.1")).watchFiles(false).build();
        TlsConfig h1 = h2.toBuilder().alpn(List.of("http/1.1")).build();
        ClusterConfig c = ClusterConfig.of("c", List.of(new HostConfig("127.0.0.1", backend.port(), 1)));
        ClusterConfig dead = ClusterConfig.of("dead", List.of(new HostConfig("127.0.0.1", Ports.free(), 1)));
        List<RouteConfig> routes = List.of(new RouteConfig("dead", RouteMatch.pathPrefix("/dead.Svc/"), "dead", null, null),
                new RouteConfig("r", RouteMatch.pathPrefix("/r/"), "c", "/", null));
        gw = GatewayFixture.start(GatewayConfig.builder()
                .listeners(ListenerConfig.builder().name("h2").routes(routes).tls(h2).build(),
                        ListenerConfig.builder().name("auto").protocol(Protocol.AUTO).routes(routes).tls(h2).build(),
                        ListenerConfig.builder().name("h1").routes(routes).tls(h1).build())
                .clusters(c, dead).admin(AdminConfig.disabled())
                .transport(TransportConfig.builder().workerThreads(1).backlog(128).build())
                .drainTimeout(Duration.ofSeconds(2)).build());
    }

    @AfterAll
    static void stop() throws Exception {
        if (gw != null) {
            gw.shutdown().orTimeout(30, TimeUnit.SECONDS).join();
        }
        backend.close();
    }

    static HttpResponse<String> get(String listener) throws Exception {
        HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_2)
                .sslContext(TestPki.trusting(pki.caCert())).connectTimeout(Duration.ofSeconds(5)).build();
        return http.send(HttpRequest.newBuilder(URI.create("https://127.0.0.1:" + gw.port(listener) + "/r/hello"))
                .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void alpnH2ServesHttp2ToTheJdkClientAndHttp11ToTheUpstream() throws Exception {
        for (String listener : List.of("h2", "auto")) {
            HttpResponse<String> r = get(listener);
            assertThat(r.version()).as(listener).isEqualTo(HttpClient.Version.HTTP_2);
            assertThat(r.statusCode()).isEqualTo(200);
            assertThat(r.body()).startsWith("GET /hello HTTP/1.1").containsIgnoringCase("x-forwarded-proto: https");
        }
    }

    /** ALPN h2 makes the connection HTTP/2 at the handshake: the gateway's SETTINGS arrive before the client says anything. */
    @Test
    void alpnH2InstallsHttp2AtTheHandshake() throws Exception {
        javax.net.ssl.SSLContext ssl = TestPki.trusting(pki.caCert());
        try (javax.net.ssl.SSLSocket s = (javax.net.ssl.SSLSocket) ssl.getSocketFactory().createSocket("127.0.0.1", gw.port("h2"))) {
            s.setSoTimeout(5000);
            javax.net.ssl.SSLParameters p = s.getSSLParameters();
            p.setApplicationProtocols(new String[] {"h2", "http/1.1"});
            s.setSSLParameters(p);
            s.startHandshake();
            assertThat(s.getApplicationProtocol()).isEqualTo("h2");
            byte[] frame = s.getInputStream().readNBytes(9);
            assertThat(frame).hasSize(9);
            assertThat(frame[3]).as("frame type SETTINGS").isEqualTo((byte) 4);
        }
    }

    @Test
    void withoutH2InAlpnTheSameClientStaysOnHttp11() throws Exception {
        HttpResponse<String> r = get("h1");
        assertThat(r.version()).isEqualTo(HttpClient.Version.HTTP_1_1);
        assertThat(r.statusCode()).isEqualTo(200);
    }

    @Test
    void grpcJavaOverTlsGetsTheGatewaysStatusCodes() throws Exception {
        io.grpc.ChannelCredentials creds = io.grpc.TlsChannelCredentials.newBuilder()
                .trustManager(pki.caCert().toFile()).build();
        io.grpc.ManagedChannel ch = io.grpc.Grpc.newChannelBuilderForAddress("127.0.0.1", gw.port("h2"), creds)
                .overrideAuthority("gateway.test").build();
        try {
            assertThat(H2cProxyIT.callStatus(ch, "pkg.Nope/Call", 5_000)).isEqualTo(io.grpc.Status.Code.UNIMPLEMENTED);
            assertThat(H2cProxyIT.callStatus(ch, "dead.Svc/Call", 5_000)).isEqualTo(io.grpc.Status.Code.UNAVAILABLE);
        } finally {
            ch.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
    }
}
