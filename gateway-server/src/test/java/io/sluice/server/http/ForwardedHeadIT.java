package io.sluice.server.http;

import io.sluice.core.config.HostConfig;
import io.sluice.core.config.HttpOptions;
import io.sluice.server.Gateway;
import io.sluice.server.testing.GatewayFixture;
import io.sluice.server.testing.RawClient;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What the upstream receives, byte for byte, with {@code x_forwarded: false} and the Host kept:
 * a head nothing changes goes up as the client sent it (no copy), and one the gateway must touch
 * (hop-by-hop headers, bare LF line ends, HTTP/1.0) is rebuilt. The backend is a plain socket
 * that answers every request with the exact bytes of its head.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ForwardedHeadIT {

    private ServerSocket backend;
    private Thread backendThread;
    private Gateway gw;

    @BeforeAll
    void start() throws IOException {
        backend = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        backendThread = new Thread(this::serve, "echo-head-backend");
        backendThread.setDaemon(true);
        backendThread.start();
        HttpOptions options = HttpOptions.builder().xForwarded(false).build();
        gw = GatewayFixture.start(GatewayFixture.simple(List.of(new HostConfig("127.0.0.1", backend.getLocalPort(), 1)),
                options));
    }

    @AfterAll
    void stop() throws IOException {
        gw.close();
        backend.close();
    }

    /** Keep-alive connections; each request head (no bodies here) is answered with its own bytes. */
    private void serve() {
        while (!backend.isClosed()) {
            try {
                Socket s = backend.accept();
                Thread t = new Thread(() -> echoHeads(s), "echo-head-conn");
                t.setDaemon(true);
                t.start();
            } catch (IOException e) {
                return;
            }
        }
    }

    private static void echoHeads(Socket s) {
        try (s; InputStream in = s.getInputStream(); OutputStream out = s.getOutputStream()) {
            ByteArrayOutputStream head = new ByteArrayOutputStream();
            int last4 = 0; // the last four bytes read: CRLF CRLF ends a head
            int b;
            while ((b = in.read()) >= 0) {
                head.write(b);
                last4 = last4 << 8 | b;
                if (last4 == 0x0d0a0d0a) {
                    out.write(("HTTP/1.1 200 OK\r\nContent-Length: " + head.size() + "\r\n\r\n")
                            .getBytes(StandardCharsets.US_ASCII));
                    head.writeTo(out);
                    out.flush();
                    head.reset();
                    last4 = 0;
                }
            }
        } catch (IOException e) {
            // the gateway closed the connection
        }
    }

    @Test
    void anUntouchedHeadReachesTheUpstreamAsTheClientSentIt() throws IOException {
        String head = "GET /a/b?c=d HTTP/1.1\r\nHost: shop.example:8080\r\nX-Odd:  padded value \t\r\n"
                + "accept: */*\r\nCookie: k=v; k2=v2\r\n\r\n";
        try (RawClient c = new RawClient(gw.port("web"))) {
            for (int i = 0; i < 3; i++) { // and again on the same (now pooled) upstream connection
                RawClient.Response r = c.send(head).read();
                assertThat(r.status()).isEqualTo(200);
                assertThat(r.body()).isEqualTo(head);
            }
        }
    }

    @Test
    void aHeadTheGatewayMustTouchIsRebuilt() throws IOException {
        try (RawClient c = new RawClient(gw.port("web"))) {
            // bare LF line ends are accepted from the client but go up as CRLF
            RawClient.Response r = c.send("GET /lf HTTP/1.1\nHost: h\nA: 1\n\n").read();
            assertThat(r.status()).isEqualTo(200);
            assertThat(r.body()).isEqualTo("GET /lf HTTP/1.1\r\nHost: h\r\nA: 1\r\n\r\n");

            // hop-by-hop headers are dropped, the rest keeps its order and bytes
            r = c.send("GET /hop HTTP/1.1\r\nHost: h\r\nConnection: keep-alive, X-Secret\r\nX-Secret: s\r\n"
                    + "TE: trailers\r\nB:  2\r\n\r\n").read();
            assertThat(r.status()).isEqualTo(200);
            assertThat(r.body()).isEqualTo("GET /hop HTTP/1.1\r\nHost: h\r\nB:  2\r\n\r\n");
        }
        try (RawClient c = new RawClient(gw.port("web"))) {
            // an HTTP/1.0 request goes up as HTTP/1.1
            RawClient.Response r = c.send("GET /old HTTP/1.0\r\nHost: h\r\n\r\n").read();
            assertThat(r.status()).isEqualTo(200);
            assertThat(r.body()).isEqualTo("GET /old HTTP/1.1\r\nHost: h\r\n\r\n");
        }
    }

    @Test
    void pooledUpstreamConnectionsCarryEachClientsBytesUnchanged() throws IOException {
        // two clients taking turns on the pooled upstream connections: each gets its own head back
        try (RawClient a = new RawClient(gw.port("web")); RawClient b = new RawClient(gw.port("web"))) {
            String ha = "GET /x HTTP/1.1\r\nHost: a\r\n\r\n";
            String hb = "GET /y HTTP/1.1\r\nHost: b\r\nUser-Agent: t\r\n\r\n";
            for (int i = 0; i < 5; i++) {
                assertThat(a.send(ha).read().body()).isEqualTo(ha);
                assertThat(b.send(hb).read().body()).isEqualTo(hb);
            }
        }
    }
}
