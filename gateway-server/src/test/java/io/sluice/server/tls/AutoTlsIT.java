package io.sluice.server.tls;

import com.alipay.remoting.BizContext;
import com.alipay.remoting.rpc.RpcServer;
import com.alipay.remoting.rpc.protocol.SyncUserProcessor;
import io.sluice.core.config.AdminConfig;
import io.sluice.core.config.CertificateConfig;
import io.sluice.core.config.ClusterConfig;
import io.sluice.core.config.GatewayConfig;
import io.sluice.core.config.HostConfig;
import io.sluice.core.config.ListenerConfig;
import io.sluice.core.config.Protocol;
import io.sluice.core.config.RouteConfig;
import io.sluice.core.config.TlsConfig;
import io.sluice.core.config.TransportConfig;
import io.sluice.server.Gateway;
import io.sluice.server.testing.GatewayFixture;
import io.sluice.server.testing.TestBackend;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Auto listeners with TLS: a ClientHello (0x16) starts TLS, then HTTP or Bolt is detected inside.
 * Bolt over TLS is the real bolt RpcClient with its client SSL options; cleartext is refused
 * unless {@code allow_plaintext}.
 */
class AutoTlsIT {

    @TempDir
    static Path dir;
    static TestPki pki;
    static TestBackend web;
    static RpcServer rpc;
    static Path trust;
    static Gateway gw;

    @BeforeAll
    static void start() throws Exception {
        pki = TestPki.ca(dir, "auto");
        TestPki.Leaf leaf = pki.leaf("gw", "gateway.test", 5, "DNS:gateway.test", "IP:127.0.0.1");
        web = TestBackend.start();
        rpc = new RpcServer(0, false, false);
        rpc.registerUserProcessor(new SyncUserProcessor<String>() {
            @Override
            public Object handleRequest(BizContext ctx, String req) {
                return "echo:" + req;
            }

            @Override
            public String interest() {
                return String.class.getName();
            }
        });
        rpc.startup();
        trust = TestPki.trustStore(pki.caCert(), dir.resolve("trust.p12"), "changeit");
        TlsConfig tls = TlsConfig.builder().certificates(CertificateConfig.pem(leaf.chain().toString(), leaf.key().toString()))
                .watchFiles(false).build();
        ClusterConfig webCluster = ClusterConfig.of("web", List.of(new HostConfig("127.0.0.1", web.port(), 1)));
        ClusterConfig rpcCluster = ClusterConfig.of("rpc", List.of(new HostConfig("127.0.0.1", rpc.port(), 1)))
                .withProtocol(Protocol.BOLT);
        ListenerConfig tlsOnly = ListenerConfig.builder().name("tls").protocol(Protocol.AUTO)
                .routes(RouteConfig.to("rpc"), RouteConfig.to("web")).tls(tls).build();
        ListenerConfig mixed = ListenerConfig.builder().name("mixed").protocol(Protocol.AUTO)
                .routes(RouteConfig.to("rpc"), RouteConfig.to("web")).tls(tls.toBuilder().allowPlaintext(true).build()).build();
        gw = GatewayFixture.start(GatewayConfig.builder().listeners(tlsOnly, mixed).clusters(webCluster, rpcCluster)
                .admin(AdminConfig.disabled()).transport(TransportConfig.builder().workerThreads(1).backlog(128).build())
                .drainTimeout(Duration.ofSeconds(2)).build());
    }

    @AfterAll
    static void stop() {
        if (gw != null) {
            gw.shutdown().orTimeout(30, TimeUnit.SECONDS).join();
        }
        rpc.shutdown();
        web.close();
    }

    static HttpResponse<String> get(String scheme, String listener) throws Exception {
        HttpClient c = HttpClient.newBuilder().sslContext(TestPki.trusting(pki.caCert())).build();
        return c.send(HttpRequest.newBuilder(URI.create(scheme + "://127.0.0.1:" + gw.port(listener) + "/x"))
                .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
    }

    /** The bolt RpcClient with SSL on, in its own JVM ({@link BoltTlsClientMain}); its output lines. */
    static List<String> boltOverTls(String listener, String... messages) throws Exception {
        List<String> cmd = new java.util.ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp", System.getProperty("java.class.path"), "--add-opens", "java.base/java.lang=ALL-UNNAMED",
                "-Dio.netty.handler.ssl.defaultEndpointVerificationAlgorithm=NONE",
                BoltTlsClientMain.class.getName(), "127.0.0.1:" + gw.port(listener), trust.toString(), "changeit"));
        cmd.addAll(List.of(messages));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
        return out.lines().filter(l -> l.startsWith("answer:") || l.startsWith("failed:")).toList();
    }

    @Test
    void httpsAndBoltOverTlsShareTheAutoPort() throws Exception {
        assertThat(get("https", "tls").body()).isEqualTo("ok from " + web.port());
        assertThat(boltOverTls("tls", "over-tls", "again")).containsExactly("answer:echo:over-tls", "answer:echo:again");
        assertThat(gw.meterRegistry().find("sluice.tls.handshakes").tags("listener", "tls", "result", "success")
                .counter().count()).isGreaterThanOrEqualTo(2);
    }

    @Test
    void cleartextIsClosedOnATlsOnlyAutoListenerAndServedWhereAllowed() throws Exception {
        try (Socket s = new Socket("127.0.0.1", gw.port("tls"))) {
            s.setSoTimeout(5000);
            s.getOutputStream().write("GET /x HTTP/1.1\r\nHost: x\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
            assertThat(s.getInputStream().read()).isEqualTo(-1);
        }
        assertThat(get("http", "mixed").body()).isEqualTo("ok from " + web.port());
        assertThat(get("https", "mixed").body()).isEqualTo("ok from " + web.port());
    }
}
