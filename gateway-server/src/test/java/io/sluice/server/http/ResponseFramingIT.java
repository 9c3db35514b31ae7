package io.sluice.server.http;

import io.sluice.server.Gateway;
import io.sluice.server.config.ConfigLoader;
import io.sluice.server.testing.SocketServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Response splitting and client desync through a real gateway: a raw-socket upstream sends
 * response framing that two HTTP/1.1 readers could read two ways, and a raw client records every
 * byte the gateway gives it until the connection closes. The client gets a 502, or a head whose
 * framing is in one canonical form, or (once a head went out) a truncated body and a close:
 * never the upstream's bytes as received, and never a second response.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ResponseFramingIT {

    /** Bytes that would become a second response if the client read the framing another way. */
    private static final String SMUGGLED = "HTTP/1.1 200 OK\r\nSet-Cookie: session=attacker\r\nContent-Length: 8\r\n\r\nSMUGGLED";

    /** In a response: the upstream flushes what came before, waits 200 ms, then sends the rest. */
    private static final String PAUSE = "<pause>";

    private EvilUpstream upstream;
    private Gateway gw;

    @BeforeAll
    void start() throws IOException {
        upstream = new EvilUpstream();
        String json = """
                {
                  "listeners": [{"name": "web", "port": 0, "routes": [{"cluster": "evil"}]}],
                  "clusters": [{"name": "evil", "hosts": ["127.0.0.1:%d"]}],
                  "admin": {"enabled": false}
                }
                """.formatted(upstream.port());
        gw = Gateway.builder().config(ConfigLoader.parse(json, "ResponseFramingIT").config())
                .random(new SplittableRandom(7)).build().start().join();
    }

    @AfterAll
    void stop() throws IOException {
        gw.close();
        upstream.close();
    }

    /** Sends {@code GET /id} (the upstream answers {@code response}) and returns all the client receives. */
    private String exchange(String id, String response) throws IOException {
        return exchange(id, response, "HTTP/1.1");
    }

    private String exchange(String id, String response, String clientVersion) throws IOException {
        upstream.responses.put("/" + id, response);
        try (Socket s = new Socket("127.0.0.1", gw.port("web"))) {
            s.setSoTimeout(10_000);
            OutputStream out = s.getOutputStream();
            out.write(("GET /" + id + " " + clientVersion + "\r\nHost: h\r\nConnection: close\r\n\r\n")
                    .getBytes(StandardCharsets.ISO_8859_1));
            out.flush();
            ByteArrayOutputStream got = new ByteArrayOutputStream();
            InputStream in = s.getInputStream();
            byte[] b = new byte[4096];
            try {
                int n;
                while ((n = in.read(b)) >= 0) {
                    got.write(b, 0, n);
                }
            } catch (IOException reset) {
                // a reset counts as the close
            }
            return got.toString(StandardCharsets.ISO_8859_1);
        }
    }

    private static String unescape(String s) {
        return s.replace("\\r", "\r").replace("\\n", "\n").replace("\\t", "\t").replace("\\0", "\0");
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
            "dup-cl|HTTP/1.1 200 OK\\r\\nContent-Length: 5\\r\\nContent-Length: 5\\r\\n\\r\\nhello",
            "cl-list|HTTP/1.1 200 OK\\r\\nContent-Length: 5, 5\\r\\n\\r\\nhello",
            "cl-differ|HTTP/1.1 200 OK\\r\\nContent-Length: 0\\r\\nContent-Length: 95\\r\\n\\r\\n",
            "te-and-cl|HTTP/1.1 200 OK\\r\\nContent-Length: 0\\r\\nTransfer-Encoding: chunked\\r\\n\\r\\n",
            "te-twice|HTTP/1.1 200 OK\\r\\nTransfer-Encoding: chunked\\r\\nTransfer-Encoding: identity\\r\\n\\r\\n",
            "te-chunked-first|HTTP/1.1 200 OK\\r\\nTransfer-Encoding: chunked, identity\\r\\n\\r\\n",
            "te-chunked-last|HTTP/1.1 200 OK\\r\\nTransfer-Encoding: identity, chunked\\r\\n\\r\\n",
            "te-http10|HTTP/1.0 200 OK\\r\\nTransfer-Encoding: chunked\\r\\n\\r\\n",
            "obs-fold|HTTP/1.1 200 OK\\r\\nX-A: 1\\r\\n Content-Length: 0\\r\\nContent-Length: 95\\r\\n\\r\\n",
            "space-colon|HTTP/1.1 200 OK\\r\\nContent-Length : 0\\r\\nContent-Length: 95\\r\\n\\r\\n",
            "control|HTTP/1.1 200 OK\\r\\nX-A: a\\0b\\r\\nContent-Length: 95\\r\\n\\r\\n",
    })
    void framingTheClientCouldReadAnotherWayIsA502(String id, String head) throws IOException {
        // the smuggled response is what a reader of the other framing would see next
        String got = exchange(id, unescape(head) + SMUGGLED);
        assertThat(got).startsWith("HTTP/1.1 502 ");
        assertThat(got).doesNotContain("attacker").doesNotContain("SMUGGLED")
                .containsOnlyOnce("HTTP/1.1 ");
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
            "bare-lf-size|5\\nhello\\r\\n0\\r\\n\\r\\n",
            "bare-lf-data|5\\r\\nhello\\n0\\r\\n\\r\\n",
            "cr-in-extension|5;a=\\rb\\r\\nhello\\r\\n0\\r\\n\\r\\n",
            "bad-size|5 5\\r\\nhello\\r\\n0\\r\\n\\r\\n",
            "trailer-swallows|0\\r\\n\\r\\r\\n",
            "trailer-bare-lf|0\\r\\nX-T: 1\\n\\r\\n",
            "trailer-cl|0\\r\\nContent-Length: 5\\r\\n\\r\\n",
            "trailer-name|0\\r\\nX T: 1\\r\\n\\r\\n",
    })
    void aMalformedChunkedBodyIsCutOffNeverForwarded(String id, String body) throws IOException {
        String head = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";
        // the body comes in a later read than the head, which the gateway has then passed on: the
        // client gets the head, then a close mid-body; no byte of the read holding the bad framing
        // (with both in one read, it would get only the close: the head is not flushed yet)
        String got = exchange(id, head + PAUSE + unescape(body) + SMUGGLED);
        assertThat(got).isEqualTo("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n");
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
            "cl-tab|HTTP/1.1 200 OK\\r\\nContent-Length:\\t005 \\r\\nX-A: 1\\r\\n\\r\\nhello"
                    + "|HTTP/1.1 200 OK\\r\\nContent-Length: 5\\r\\nX-A: 1\\r\\nConnection: close\\r\\n\\r\\nhello",
            "te-case|HTTP/1.1 200 OK\\r\\nTransfer-Encoding:\\tChunked \\r\\n\\r\\n5\\r\\nhello\\r\\n0\\r\\n\\r\\n"
                    + "|HTTP/1.1 200 OK\\r\\nTransfer-Encoding: chunked\\r\\nConnection: close\\r\\n\\r\\n5\\r\\nhello\\r\\n0\\r\\n\\r\\n",
    })
    void oddButLegalFramingReachesTheClientCanonically(String id, String response, String expected) throws IOException {
        assertThat(exchange(id, unescape(response))).isEqualTo(unescape(expected));
    }

    @Test
    void codingsWithoutChunkedAreChunkedByTheGatewayUnderOneTransferEncodingLine() throws IOException {
        String got = exchange("gzip", "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\nGZIPBYTES");
        assertThat(got).startsWith("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\nConnection: close\r\n\r\n")
                .containsOnlyOnce("Transfer-Encoding").endsWith("0\r\n\r\n").contains("GZIPBYTES");
        // an HTTP/1.0 client reads until the close: the body as received, the codings named once
        assertThat(exchange("gzip-10", "HTTP/1.1 200 OK\r\nTransfer-Encoding:  gzip\r\n\r\nGZIPBYTES", "HTTP/1.0"))
                .isEqualTo("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\nConnection: close\r\n\r\nGZIPBYTES");
    }

    @Test
    void theCommonResponseArrivesAsSent() throws IOException {
        assertThat(exchange("ok", "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nServer: s\r\n\r\nhello"))
                .isEqualTo("HTTP/1.1 200 OK\r\nContent-Length: 5\r\nServer: s\r\nConnection: close\r\n\r\nhello");
    }

    /**
     * Answers each request with the bytes registered for its target, in one write, then closes
     * (so that a close-delimited body ends and nothing waits on a keep-alive).
     */
    private static final class EvilUpstream implements AutoCloseable {
        final Map<String, String> responses = new ConcurrentHashMap<>();
        final SocketServer server;

        EvilUpstream() throws IOException {
            server = new SocketServer("evil-upstream", 50, (socket, index) -> serve(socket));
        }

        int port() {
            return server.port();
        }

        private void serve(Socket s) {
            try (InputStream in = s.getInputStream(); OutputStream out = s.getOutputStream()) {
                String line = SocketServer.readRequestHead(in);
                if (line == null) {
                    return;
                }
                String response = responses.getOrDefault(line.split(" ")[1],
                        "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n");
                int pause = response.indexOf(PAUSE);
                if (pause >= 0) {
                    out.write(response.substring(0, pause).getBytes(StandardCharsets.ISO_8859_1));
                    out.flush();
                    Thread.sleep(200);
                    response = response.substring(pause + PAUSE.length());
                }
                out.write(response.getBytes(StandardCharsets.ISO_8859_1));
                out.flush();
                s.shutdownOutput();
                while (in.read() >= 0) {
                    // wait for the gateway to close
                }
            } catch (IOException | InterruptedException e) {
                // the gateway closed the connection
            }
        }


        @Override
        public void close() throws IOException {
            server.close();
        }
    }
}
