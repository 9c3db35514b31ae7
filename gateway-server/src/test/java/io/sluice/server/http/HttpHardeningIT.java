package io.sluice.server.http;

import io.sluice.server.Gateway;
import io.sluice.server.config.ConfigLoader;
import io.sluice.server.testing.RawClient;
import io.sluice.server.testing.RecordingBackend;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The attacks of issue #22 (items 1, 2, 5, 6) and #23 (item 5), with their real bytes, through a
 * real gateway to a backend that records exactly what it receives ({@link RecordingBackend}, a
 * permissive origin server like the nginx the findings were reproduced with).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class HttpHardeningIT {

    private RecordingBackend backend;
    private RecordingBackend ssh;
    private Gateway gw;

    @BeforeAll
    void start() throws IOException {
        backend = new RecordingBackend();
        ssh = new RecordingBackend("SSH-2.0-OpenSSH_9.2p1 Debian-2+deb12u3\r\n");
        String json = """
                {
                  "listeners": [
                    {"name": "hosts", "port": 0, "routes": [{"match": {"hosts": ["public.example"]}, "cluster": "rec"}]},
                    {"name": "paths", "port": 0, "routes": [{"match": {"path": {"prefix": "/pub/"}}, "cluster": "rec"}]},
                    {"name": "open", "port": 0, "routes": [{"cluster": "rec"}]},
                    {"name": "trusting", "port": 0, "routes": [{"cluster": "rec"}],
                     "http": {"trusted_proxies": ["10.0.0.0/8", "127.0.0.0/8", "::1"]}},
                    {"name": "ssh", "port": 0, "routes": [{"cluster": "ssh"}]}
                  ],
                  "clusters": [
                    {"name": "rec", "hosts": ["127.0.0.1:%d"]},
                    {"name": "ssh", "hosts": ["127.0.0.1:%d"]}
                  ],
                  "admin": {"enabled": false}
                }
                """.formatted(backend.port(), ssh.port());
        gw = Gateway.builder().config(ConfigLoader.parse(json, "HttpHardeningIT").config())
                .random(new SplittableRandom(7)).build().start().orTimeout(30, TimeUnit.SECONDS).join();
    }

    @AfterAll
    void stop() throws IOException {
        gw.close();
        backend.close();
        ssh.close();
    }

    private RawClient.Response send(String listener, String request) throws IOException {
        try (RawClient c = new RawClient(gw.port(listener))) {
            c.soTimeout(5000);
            return c.send(request).read();
        }
    }

    // ------------------------------------------------------------------ #22.1 absolute-form targets

    @ParameterizedTest(name = "{0}")
    @CsvSource({"http://internal.example/", "https://internal.example/private.txt", "HTTP://internal.example/",
            "http://INTERNAL.example:80/x?y=1"})
    void anAbsoluteFormTargetIsRoutedOnItsOwnAuthorityNotOnHost(String target) throws IOException {
        int before = backend.requests().size();
        RawClient.Response r = send("hosts", "GET " + target + " HTTP/1.1\r\nHost: public.example\r\n\r\n");
        assertThat(r.status()).as("only public.example is routed").isEqualTo(404);
        assertThat(backend.requests()).hasSize(before);
    }

    @Test
    void anAbsoluteFormRequestGoesUpWithTargetAndHostInAgreement() throws IOException {
        RawClient.Response r = send("hosts", "GET http://public.example/a/../b?q=%2e HTTP/1.1\r\nHost: other.example\r\n\r\n");
        assertThat(r.status()).isEqualTo(200);
        assertThat(r.body()).startsWith("GET /b?q=%2e HTTP/1.1\r\nHost: public.example\r\n")
                .contains("\r\nX-Forwarded-Host: public.example\r\n")
                .doesNotContain("other.example").doesNotContain("http://");
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
            "GET http://user@public.example/ HTTP/1.1|400|userinfo in request target",
            "GET http://public.example:http/ HTTP/1.1|400|invalid authority in request target",
            "CONNECT public.example:443 HTTP/1.1|405|CONNECT is not supported",
            "GET public.example:443 HTTP/1.1|400|request target must be an absolute path",
            "GET * HTTP/1.1|400|asterisk-form request target is only allowed with OPTIONS",
    })
    void targetsThatCannotBeForwardedSafelyAreRefused(String line, int status, String reason) throws IOException {
        int before = backend.requests().size();
        try (RawClient c = new RawClient(gw.port("open"))) {
            RawClient.Response r = c.send(line + "\r\nHost: public.example\r\n\r\n").read();
            assertThat(r.status()).isEqualTo(status);
            assertThat(r.body()).contains(reason);
            assertThat(c.closedByPeer()).isTrue();
        }
        assertThat(backend.requests()).hasSize(before);
    }

    // ------------------------------------------------------------------ #22.2 path normalization

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
            "/pub/../private.txt|404",
            "/pub/%2e%2e/private.txt|404",
            "/pub/.%2E/private.txt|404",
            "/pub/..%2fprivate.txt|400",
            "/pub/..%2Fprivate.txt|400",
            "/pub/..%5cprivate.txt|400",
            "/pub\\..\\private.txt|400",
            "/pub/%zz|400",
    })
    void aPathOutsideTheRoutedPrefixDoesNotReachTheUpstream(String path, int status) throws IOException {
        int before = backend.requests().size();
        RawClient.Response r = send("paths", "GET " + path + " HTTP/1.1\r\nHost: h\r\n\r\n");
        assertThat(r.status()).isEqualTo(status);
        assertThat(backend.requests()).hasSize(before);
    }

    @Test
    void theUpstreamGetsThePathThatWasMatchedAndTheQueryAsSent() throws IOException {
        RawClient.Response r = send("paths", "GET /pub/./a/%7Eb/../c.txt?x=../%2e&y HTTP/1.1\r\nHost: h\r\n\r\n");
        assertThat(r.status()).isEqualTo(200);
        assertThat(r.body()).startsWith("GET /pub/a/c.txt?x=../%2e&y HTTP/1.1\r\n");
    }

    // ------------------------------------------------------------------ #22.5 forwarding headers

    private static final String FORGED = "GET /f HTTP/1.1\r\nHost: shop.example\r\nX-Forwarded-For: 6.6.6.6\r\n"
            + "X-Forwarded-Proto: https\r\nX-Forwarded-Host: admin.internal\r\nForwarded: for=6.6.6.6;proto=https;host=admin.internal\r\n\r\n";

    @Test
    void aClientCannotForgeForwardingHeaders() throws IOException {
        RawClient.Response r = send("open", FORGED);
        assertThat(r.status()).isEqualTo(200);
        assertThat(r.body()).isEqualTo("GET /f HTTP/1.1\r\nHost: shop.example\r\nX-Forwarded-For: 127.0.0.1\r\n"
                + "X-Forwarded-Proto: http\r\nX-Forwarded-Host: shop.example\r\n\r\n");
    }

    @Test
    void aTrustedProxysForwardingHeadersAreKeptAndAppendedTo() throws IOException {
        RawClient.Response r = send("trusting", FORGED);
        assertThat(r.status()).isEqualTo(200);
        assertThat(r.body()).isEqualTo("GET /f HTTP/1.1\r\nHost: shop.example\r\nX-Forwarded-For: 6.6.6.6, 127.0.0.1\r\n"
                + "X-Forwarded-Proto: https\r\nX-Forwarded-Host: admin.internal\r\n"
                + "Forwarded: for=6.6.6.6;proto=https;host=admin.internal\r\n\r\n");
    }

    // ------------------------------------------------------------------ #22.6 framing

    @ParameterizedTest(name = "{2}")
    @CsvSource(delimiter = '|', value = {
            "Transfer-Encoding: ,chunked|400|empty element in Transfer-Encoding",
            "Transfer-Encoding: gzip, chunked|501|not implemented",
            "Transfer-Encoding: chunked\\r\\nTransfer-Encoding: chunked|400|more than one Transfer-Encoding",
            "Content-Length: 5\\r\\nContent-Length: 5|400|more than one Content-Length",
            "Content-Length: 5, 5|400|invalid Content-Length",
            "Host: a b\\r\\nX: y|400|invalid Host header",
    })
    void ambiguousFramingIsRefusedBeforeAnythingIsForwarded(String header, int status, String reason) throws IOException {
        int before = backend.requests().size();
        String h = header.replace("\\r\\n", "\r\n");
        String req = "POST /f HTTP/1.1\r\n" + (h.startsWith("Host") ? "" : "Host: h\r\n") + h
                + "\r\n\r\n5\r\nhello\r\n0\r\n\r\n";
        try (RawClient c = new RawClient(gw.port("open"))) {
            RawClient.Response r = c.send(req).read();
            assertThat(r.status()).isEqualTo(status);
            assertThat(r.body()).contains(reason);
            assertThat(c.closedByPeer()).isTrue();
        }
        assertThat(backend.requests()).hasSize(before);
    }

    @Test
    void framingHeadersReachTheUpstreamInCanonicalForm() throws IOException {
        RawClient.Response te = send("open", "POST /te HTTP/1.1\r\nHost: h\r\nTransfer-Encoding:\tchunked\r\n\r\n"
                + "5\r\nhello\r\n0\r\n\r\n");
        assertThat(te.status()).isEqualTo(200);
        assertThat(te.body()).contains("\r\nTransfer-Encoding: chunked\r\n").doesNotContain("\t")
                .endsWith("\r\n\r\n5\r\nhello\r\n0\r\n\r\n");
        RawClient.Response cl = send("open", "POST /cl HTTP/1.1\r\nHost: h\r\nContent-Length:\t5\r\n\r\nhello");
        assertThat(cl.status()).isEqualTo(200);
        assertThat(cl.body()).contains("\r\nContent-Length: 5\r\n").doesNotContain("\t").endsWith("\r\n\r\nhello");
    }

    @ParameterizedTest(name = "{1}")
    @CsvSource(delimiter = '|', value = {
            "5;a=b\\rc\\r\\nhello\\r\\n0\\r\\n\\r\\n|malformed chunk size line",
            "5\\nhello\\n0\\n\\n|bare LF in chunked framing",
            "5\\r\\nhello\\r\\n0\\r\\nContent-Length: 40\\r\\n\\r\\n|Content-Length is not allowed in a trailer section",
    })
    void aMalformedChunkedBodyIsCutOffWithA400(String body, String reason) throws IOException {
        String req = "POST /c HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n" + body.replace("\\r", "\r")
                .replace("\\n", "\n");
        int before = backend.requests().size();
        try (RawClient c = new RawClient(gw.port("open"))) {
            RawClient.Response r = c.send(req).read();
            assertThat(r.status()).isEqualTo(400);
            assertThat(r.body()).contains(reason);
            assertThat(c.closedByPeer()).isTrue();
        }
        assertThat(backend.requests()).as("no complete request reached the upstream").hasSize(before);
    }

    @Test
    void aTrailerCannotSwallowTheNextPipelinedRequest() throws IOException {
        String req = "POST /first HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\r\n"
                + "GET /smuggled HTTP/1.1\r\nHost: h\r\n\r\n";
        try (RawClient c = new RawClient(gw.port("open"))) {
            RawClient.Response r = c.send(req).read();
            assertThat(r.status()).isEqualTo(400);
            assertThat(c.closedByPeer()).isTrue();
        }
        assertThat(backend.requests()).noneMatch(s -> s.contains("/smuggled"));
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource({"HTTP/0.1", "HTTP/2.0", "HTTP/3.0"})
    void unknownVersionsGet505(String version) throws IOException {
        RawClient.Response r = send("open", "GET / " + version + "\r\nHost: h\r\n\r\n");
        assertThat(r.status()).isEqualTo(505);
    }

    // ------------------------------------------------------------------ #23.5 the first impossible byte

    /**
     * Junk is answered 400 and the connection closed at once, not left open until the head timeout.
     * 4 KiB is more than the gateway's first read: it closes with junk still unread, so the kernel
     * may reset the connection and the client may lose the answer (the gateway does not linger on
     * close); a reset counts as closed. 1 KiB fits one read: the 400 must arrive.
     */
    @Test
    void connectionsSendingRandomBytesAreAnsweredAndClosedAtOnce() throws IOException {
        Random rnd = new Random(23);
        List<Socket> sockets = new ArrayList<>();
        try {
            for (int i = 0; i < 100; i++) {
                Socket s = new Socket("127.0.0.1", gw.port("open"));
                s.setSoTimeout(3000); // far below request_header_timeout (10 s)
                byte[] junk = new byte[i % 2 == 0 ? 1024 : 4096];
                rnd.nextBytes(junk);
                OutputStream out = s.getOutputStream();
                try {
                    out.write(junk);
                    out.flush();
                } catch (IOException e) {
                    // refused and closed before all bytes were written
                }
                sockets.add(s);
            }
            int answered = 0;
            for (int i = 0; i < sockets.size(); i++) {
                InputStream in = sockets.get(i).getInputStream();
                String answer;
                try {
                    answer = new String(in.readAllBytes(), StandardCharsets.ISO_8859_1); // until the close
                } catch (java.net.SocketTimeoutException e) {
                    throw new AssertionError("connection " + i + " neither answered nor closed within 3 s", e);
                } catch (java.net.SocketException reset) {
                    // the gateway lingers after its answer (reads and discards), so even a client that
                    // sent more than one read gets the whole 400, never a reset
                    throw new AssertionError("connection " + i + " (" + (i % 2 == 0 ? 1024 : 4096)
                            + " bytes sent) was reset", reset);
                }
                assertThat(answer).startsWith("HTTP/1.1 400 ");
                answered++;
            }
            assertThat(answered).isEqualTo(sockets.size());
        } finally {
            for (Socket s : sockets) {
                s.close();
            }
        }
    }

    @Test
    void anUpstreamThatDoesNotSpeakHttpIsA502AtOnce() throws IOException {
        try (RawClient c = new RawClient(gw.port("ssh"))) {
            c.soTimeout(3000); // the route timeout is 15 s: a 504 would come far later
            RawClient.Response r = c.send("GET / HTTP/1.1\r\nHost: h\r\n\r\n").read();
            assertThat(r.status()).isEqualTo(502);
            assertThat(r.body()).contains("malformed status line");
        }
    }
}
