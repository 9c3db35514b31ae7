package io.sluice.server.tls;

import io.micrometer.core.instrument.Counter;
import io.sluice.core.config.CertificateConfig;
import io.sluice.core.config.ClusterConfig;
import io.sluice.core.config.GatewayConfig;
import io.sluice.core.config.HostConfig;
import io.sluice.core.config.ListenerConfig;
import io.sluice.core.config.RouteConfig;
import io.sluice.core.config.TlsConfig;
import io.sluice.core.config.AdminConfig;
import io.sluice.core.config.TransportConfig;
import io.sluice.server.Gateway;
import io.sluice.server.testing.GatewayFixture;
import io.sluice.server.testing.RecordingBackend;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import javax.net.ssl.SNIHostName;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocket;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/** Downstream TLS on real sockets: HTTPS through the gateway, SNI, mTLS, refused handshakes, garbage. */
class DownstreamTlsIT {

    @TempDir
    static Path dir;
    static TestPki pki;
    static TestPki otherCa;
    static TestPki.Leaf defaultCert;
    static TestPki.Leaf wildcardCert;
    static TestPki.Leaf client;
    static TestPki.Leaf strangerClient;
    static TestPki.Leaf expiredClient;
    static RecordingBackend backend;
    static Gateway gw;

    @BeforeAll
    static void start() throws Exception {
        pki = TestPki.ca(dir, "test");
        otherCa = TestPki.ca(dir, "other");
        defaultCert = pki.leaf("default", "gateway.test", 10, "DNS:gateway.test", "IP:127.0.0.1");
        wildcardCert = pki.rsaLeaf("wild", "wild.test", 10, "DNS:*.wild.test");
        client = pki.leaf("client", "client-a", 10, "DNS:client-a.test", "URI:spiffe://test/client-a");
        strangerClient = otherCa.leaf("stranger", "stranger", 10, "DNS:stranger.test");
        expiredClient = pki.leaf("expired-client", "expired-client", -1, "DNS:expired.test");
        backend = new RecordingBackend();
        TlsConfig tls = TlsConfig.builder().certificates(
                        CertificateConfig.pem(defaultCert.chain().toString(), defaultCert.key().toString(), "gateway.test"),
                        CertificateConfig.pem(wildcardCert.chain().toString(), wildcardCert.key().toString(), "*.wild.test"))
                .watchFiles(false).build();
        TlsConfig mtls = tls.toBuilder().clientAuth(TlsConfig.ClientAuth.REQUIRE, pki.caCert().toString()).build();
        TlsConfig optional = tls.toBuilder().clientAuth(TlsConfig.ClientAuth.OPTIONAL, pki.caCert().toString())
                .forwardIdentity(true).build();
        ClusterConfig c = ClusterConfig.of("c", List.of(new HostConfig("127.0.0.1", backend.port(), 1)));
        RouteConfig byIdentity = new RouteConfig("client-a", new io.sluice.core.config.RouteMatch(null,
                io.sluice.core.config.StringMatch.prefix("/id"), null, List.of(new io.sluice.core.config.HeaderMatch(
                        TlsConfig.DEFAULT_IDENTITY_HEADER, io.sluice.core.config.StringMatch.regex(".*;DNS=client-a\\.test(;.*)?"))),
                null, null), "c", null, null);
        RouteConfig open = new RouteConfig("open", new io.sluice.core.config.RouteMatch(null,
                io.sluice.core.config.StringMatch.prefix("/open"), null, null, null, null), "c", null, null);
        gw = GatewayFixture.start(GatewayConfig.builder()
                .listeners(ListenerConfig.builder().name("web").routes(RouteConfig.to("c")).tls(tls).build(),
                        ListenerConfig.builder().name("mtls").routes(RouteConfig.to("c")).tls(mtls).build(),
                        ListenerConfig.builder().name("opt").routes(byIdentity, open).tls(optional).build(),
                        ListenerConfig.builder().name("notix").routes(RouteConfig.to("c"))
                                .tls(tls.toBuilder().sessionTickets(false).build()).build())
                .clusters(c).admin(new AdminConfig(true, "127.0.0.1", 0))
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

    static HttpClient client(SSLContext ssl) {
        return HttpClient.newBuilder().sslContext(ssl).connectTimeout(Duration.ofSeconds(5)).build();
    }

    static HttpResponse<String> get(HttpClient http, String listener) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create("https://127.0.0.1:" + gw.port(listener) + "/hello"))
                .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
    }

    double handshakes(String listener, String result, String reason) {
        Counter c = gw.meterRegistry().find("sluice.tls.handshakes").tags("listener", listener, "result", result,
                "reason", reason).counter();
        return c == null ? 0 : c.count();
    }

    @Test
    void httpsRequestThroughTheGatewayWithAPinnedCa() throws Exception {
        HttpResponse<String> r = get(client(TestPki.trusting(pki.caCert())), "web");
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(r.body()).startsWith("GET /hello HTTP/1.1");
        assertThat(handshakes("web", "success", "ok")).isGreaterThanOrEqualTo(1);
        assertThat(gw.meterRegistry().find("sluice.tls.negotiated").tags("listener", "web", "protocol", "TLSv1.3")
                .counter()).isNotNull();
        assertThat(gw.meterRegistry().find("sluice.tls.certificate.expiry").tags("listener", "web").gauges())
                .hasSize(2).allSatisfy(g -> assertThat(g.value()).isBetween(9.0, 10.1));
    }

    @Test
    void aClientThatDoesNotTrustTheCaFailsItsHandshake() {
        assertThatThrownBy(() -> get(client(TestPki.trusting(otherCa.caCert())), "web")).isInstanceOf(SSLException.class);
    }

    /** The certificate the gateway presents for an SNI name (null: no SNI). */
    static X509Certificate presented(String sni, String listener, SSLContext ssl) throws Exception {
        try (SSLSocket s = (SSLSocket) ssl.getSocketFactory().createSocket("127.0.0.1", gw.port(listener))) {
            s.setSoTimeout(5000);
            SSLParameters p = s.getSSLParameters();
            if (sni != null) {
                p.setServerNames(List.of(new SNIHostName(sni)));
            }
            p.setApplicationProtocols(new String[]{"h2", "http/1.1"});
            s.setSSLParameters(p);
            s.startHandshake();
            assertThat(s.getApplicationProtocol()).isEqualTo("http/1.1");
            return (X509Certificate) s.getSession().getPeerCertificates()[0];
        }
    }

    @Test
    void sniPicksTheCertificateExactThenWildcardElseTheDefault() throws Exception {
        // a fresh client context per connection: the JDK client would otherwise resume the session of
        // the previous connection (its cache is per host and port, not per SNI name)
        java.util.function.Supplier<SSLContext> t = () -> TestPki.trusting(pki.caCert());
        assertThat(presented("gateway.test", "web", t.get()).getSubjectX500Principal().getName()).isEqualTo("CN=gateway.test");
        assertThat(presented("api.wild.test", "web", t.get()).getSubjectX500Principal().getName()).isEqualTo("CN=wild.test");
        assertThat(presented("a.b.wild.test", "web", t.get()).getSubjectX500Principal().getName()).isEqualTo("CN=gateway.test");
        assertThat(presented("unknown.test", "web", t.get()).getSubjectX500Principal().getName()).isEqualTo("CN=gateway.test");
        assertThat(presented(null, "web", t.get()).getSubjectX500Principal().getName()).isEqualTo("CN=gateway.test");
    }

    @Test
    void mtlsRequiredRefusesAClientWithoutACertificateAndServesOneWithIt() throws Exception {
        double before = handshakes("mtls", "failure", "no_certificate");
        assertThatThrownBy(() -> get(client(TestPki.trusting(pki.caCert())), "mtls")).isInstanceOf(java.io.IOException.class);
        await().atMost(Duration.ofSeconds(5)).failFast(() -> false).alias(String.valueOf(gw.meterRegistry()
                .find("sluice.tls.handshakes").counters().stream().map(c -> c.getId().getTags() + "=" + c.count()).toList()))
                .until(() -> handshakes("mtls", "failure", "no_certificate") >= before + 1); // HttpClient may retry once
        // a certificate from another CA: the JDK client offers only certificates the server's CA list names,
        // so it sends none and is refused like the client without one
        assertThatThrownBy(() -> get(client(strangerClient.clientContext(pki.caCert())), "mtls"))
                .isInstanceOf(java.io.IOException.class);
        // other connections are unaffected
        HttpResponse<String> r = get(client(client.clientContext(pki.caCert())), "mtls");
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(get(client(TestPki.trusting(pki.caCert())), "web").statusCode()).isEqualTo(200);
    }

    static HttpResponse<String> get(HttpClient http, String listener, String path, String... headers) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("https://127.0.0.1:" + gw.port(listener) + path))
                .timeout(Duration.ofSeconds(10));
        if (headers.length > 0) {
            b.headers(headers);
        }
        return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void theVerifiedIdentityRoutesAndIsForwardedWhileAClientsOwnCopyIsRemoved() throws Exception {
        HttpClient withCert = client(client.clientContext(pki.caCert()));
        HttpResponse<String> r = get(withCert, "opt", "/id", "X-Forwarded-Client-Cert", "Hash=forged");
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(r.body()).contains("\r\nx-forwarded-client-cert: Hash=")
                .contains(";Subject=\"CN=client-a\";DNS=client-a.test;URI=spiffe://test/client-a\r\n")
                .doesNotContain("forged");
        HttpClient noCert = client(TestPki.trusting(pki.caCert()));
        assertThat(get(noCert, "opt", "/id", "x-forwarded-client-cert", "Hash=x;DNS=client-a.test").statusCode())
                .as("a forged identity header does not match the route").isEqualTo(404);
        HttpResponse<String> open = get(noCert, "opt", "/open", "x-forwarded-client-cert", "Hash=forged", "X-Other", "1");
        assertThat(open.statusCode()).isEqualTo(200);
        assertThat(open.body()).doesNotContainIgnoringCase("x-forwarded-client-cert").contains("X-Other: 1")
                .endsWith("\r\n\r\n");
    }

    @Test
    void adminCertsShowsTheProviderAndEveryLoadedCertificate() throws Exception {
        HttpClient plain = HttpClient.newHttpClient();
        String certs = plain.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + gw.adminAddress().getPort() + "/certs"))
                .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString()).body();
        assertThat(certs).contains("\"provider\":\"" + TlsProvider.name() + "\"")
                .contains("\"listener\":\"web\"").contains("\"subject\":\"CN=gateway.test\"")
                .contains("\"server_names\":[\"*.wild.test\"]").contains("\"days_left\":9");
        String page = plain.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + gw.adminAddress().getPort() + "/"))
                .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString()).body();
        assertThat(page).contains("TLS certificates").contains("CN=wild.test");
    }

    /** Runs {@code openssl s_client} against a listener with {@code stdin}; its output. */
    static String sClient(String listener, String stdin, String... args) throws Exception {
        List<String> cmd = new java.util.ArrayList<>(List.of("openssl", "s_client", "-connect", "127.0.0.1:" + gw.port(listener)));
        cmd.addAll(List.of(args));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        p.getOutputStream().write(stdin.getBytes(StandardCharsets.US_ASCII));
        p.getOutputStream().flush();
        Thread.sleep(500);
        p.getOutputStream().close();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.ISO_8859_1);
        assertThat(p.waitFor(10, TimeUnit.SECONDS)).isTrue();
        return out;
    }

    @Test
    void aTls13TicketArrivesRightAfterTheHandshakeWithoutARequestAndResumes() throws Exception {
        // BoringSSL holds TLS 1.3 tickets until the next write: without SessionTickets the client of a
        // connection that sends no request gets none, and -sess_out writes no session to resume
        Path session = dir.resolve("s_client-" + System.nanoTime() + ".pem");
        String first = untilTicket("-tls1_3", "-CAfile", pki.caCert().toString(), "-sess_out", session.toString());
        assertThat(first).contains("New, TLSv1.3").contains("Post-Handshake New Session Ticket arrived");
        assertThat(session).exists();
        String again = sClient("web", "", "-tls1_3", "-CAfile", pki.caCert().toString(), "-sess_in", session.toString());
        assertThat(again).contains("Reused, TLSv1.3");
    }

    @Test
    void withSessionTicketsOffNoTls13TicketIsSentAndNothingResumes() throws Exception {
        // Netty clears SSL_OP_NO_TICKET on every TLS 1.3 server engine: without SessionTickets.disable
        // BoringSSL sent two tickets per handshake here (under keys of its own) and resumed them
        org.junit.jupiter.api.Assumptions.assumeTrue(io.netty.handler.ssl.OpenSsl.isAvailable(), "OpenSSL provider only");
        String request = "GET /hello HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
        for (String version : List.of("-tls1_3", "-tls1_2")) {
            Path session = dir.resolve("notix-" + version + System.nanoTime() + ".pem");
            String first = sClient("notix", request, version, "-CAfile", pki.caCert().toString(), "-sess_out", session.toString());
            assertThat(first).as(version).contains("HTTP/1.1 200").doesNotContain("New Session Ticket")
                    .doesNotContain("TLS session ticket:");
            if (session.toFile().exists()) {
                String again = sClient("notix", "", version, "-CAfile", pki.caCert().toString(), "-sess_in", session.toString());
                assertThat(again).as(version).doesNotContain("Reused,");
            }
        }
    }

    @Test
    void tls12ResumesByTicketWithoutAServerSessionCache() throws Exception {
        Path session = dir.resolve("s_client-tls12-" + System.nanoTime() + ".pem");
        String first = sClient("web", "GET /hello HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", "-tls1_2",
                "-CAfile", pki.caCert().toString(), "-sess_out", session.toString());
        assertThat(first).contains("New, TLSv1.2").contains("TLS session ticket:");
        String again = sClient("web", "", "-tls1_2", "-CAfile", pki.caCert().toString(), "-sess_in", session.toString());
        assertThat(again).contains("Reused, TLSv1.2");
    }

    /**
     * {@code openssl s_client} on "web" that sends nothing and hangs up once a ticket arrived, or
     * after 5 s without one; its output.
     */
    static String untilTicket(String... args) throws Exception {
        List<String> cmd = new java.util.ArrayList<>(List.of("openssl", "s_client", "-connect", "127.0.0.1:" + gw.port("web")));
        cmd.addAll(List.of(args));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        Thread deadline = new Thread(() -> {
            try {
                Thread.sleep(5_000);
                p.getOutputStream().close();
            } catch (Exception e) {
                // interrupted: the ticket came
            }
        });
        deadline.setDaemon(true);
        deadline.start();
        StringBuilder out = new StringBuilder();
        try (java.io.BufferedReader r = new java.io.BufferedReader(new java.io.InputStreamReader(p.getInputStream(), StandardCharsets.ISO_8859_1))) {
            for (String line; (line = r.readLine()) != null; ) {
                out.append(line).append('\n');
                if (line.contains("Post-Handshake New Session Ticket arrived") && deadline.isAlive()) {
                    deadline.interrupt();
                    p.getOutputStream().close(); // s_client sends close_notify and exits
                }
            }
        }
        assertThat(p.waitFor(10, TimeUnit.SECONDS)).isTrue();
        return out.toString();
    }

    @Test
    void tls10And11ClientHellosAreRefused() throws Exception {
        double before = handshakes("web", "failure", "protocol");
        for (String v : new String[]{"-tls1", "-tls1_1"}) {
            String out = sClient("web", "", v, "-cipher", "DEFAULT@SECLEVEL=0");
            assertThat(out).contains("alert protocol version").contains("Cipher is (NONE)").doesNotContain("BEGIN CERTIFICATE");
        }
        await().atMost(Duration.ofSeconds(5)).until(() -> handshakes("web", "failure", "protocol") >= before + 2);
    }

    @Test
    void clientRenegotiationIsRefused() throws Exception {
        String out = sClient("web", "R\n", "-tls1_2", "-CAfile", pki.caCert().toString());
        assertThat(out).contains("Protocol  : TLSv1.2").contains("RENEGOTIATING");
        // refused: BoringSSL answers no_renegotiation (100), the JDK provider handshake_failure (40)
        assertThat(out).containsAnyOf("alert no renegotiation", "alert handshake failure");
    }

    @Test
    void clientCertificatesFromAnUnknownCaOrExpiredAreRefusedAndCountedByReason() throws Exception {
        double unknown = handshakes("mtls", "failure", "unknown_ca");
        String out = sClient("mtls", "", "-cert", strangerClient.chain().toString(), "-key", strangerClient.key().toString(),
                "-CAfile", pki.caCert().toString());
        assertThat(out).doesNotContain("HTTP/1.1");
        await().atMost(Duration.ofSeconds(5)).until(() -> handshakes("mtls", "failure", "unknown_ca") >= unknown + 1);
        double expired = handshakes("mtls", "failure", "expired");
        assertThatThrownBy(() -> get(client(expiredClient.clientContext(pki.caCert())), "mtls"))
                .isInstanceOf(java.io.IOException.class);
        await().atMost(Duration.ofSeconds(5)).failFast(() -> false).alias(String.valueOf(gw.meterRegistry()
                .find("sluice.tls.handshakes").tags("listener", "mtls").counters().stream()
                .map(c -> c.getId().getTag("reason") + "=" + c.count()).toList()))
                .until(() -> handshakes("mtls", "failure", "expired") >= expired + 1);
    }

    @Test
    void garbageAfterAClientHelloStartIsClosedWithoutALeak() throws Exception {
        double before = handshakes("web", "failure", "not_tls") + handshakes("web", "failure", "other");
        try (Socket s = new Socket("127.0.0.1", gw.port("web"))) {
            s.setSoTimeout(5000);
            OutputStream out = s.getOutputStream();
            // a handshake record header announcing a 16 KiB ClientHello, then garbage
            out.write(new byte[]{0x16, 0x03, 0x01, 0x40, 0x00, 0x01, 0x00, 0x3f, (byte) 0xfc});
            byte[] junk = new byte[16 * 1024];
            for (int i = 0; i < junk.length; i++) {
                junk[i] = (byte) (i * 31 + 7);
            }
            out.write(junk);
            out.flush();
            InputStream in = s.getInputStream();
            byte[] buf = new byte[1024];
            int n;
            try {
                while ((n = in.read(buf)) >= 0) {
                    assertThat(n).isLessThan(64); // at most an alert
                }
            } catch (java.net.SocketException reset) {
                // closed with a reset: fine
            }
        }
        await().atMost(Duration.ofSeconds(5)).until(() ->
                handshakes("web", "failure", "not_tls") + handshakes("web", "failure", "other") == before + 1);
        assertThat(get(client(TestPki.trusting(pki.caCert())), "web").statusCode()).isEqualTo(200);
    }

    @Test
    void cleartextHttpOnATlsListenerIsRefused() throws Exception {
        try (Socket s = new Socket("127.0.0.1", gw.port("web"))) {
            s.setSoTimeout(5000);
            s.getOutputStream().write("GET / HTTP/1.1\r\nHost: x\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
            byte[] answer = s.getInputStream().readNBytes(200);
            assertThat(new String(answer, StandardCharsets.ISO_8859_1)).doesNotContain("HTTP/1.1 200");
        }
    }
}
