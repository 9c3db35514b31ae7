package io.sluice.server.http;

import io.micrometer.core.instrument.Counter;
import io.sluice.core.config.HostConfig;
import io.sluice.core.config.HttpOptions;
import io.sluice.server.Gateway;
import io.sluice.server.testing.GatewayFixture;
import io.sluice.server.testing.RawClient;
import io.sluice.server.testing.SocketServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Response-queue poisoning: an upstream that sends bytes beyond the response the gateway framed
 * (a body after a HEAD response's head, a body on a 204 or 304, more bytes than its
 * Content-Length) must not get them delivered as the response to another exchange. The backend is
 * a plain socket that misbehaves on purpose; the gateway has one event loop and one host, so a
 * connection put back in the pool is the very one the next request borrows. Each test checks what
 * the clients receive, that the dirty upstream connection was closed, and the retired-connection
 * meter.
 */
class UpstreamReuseIT {

    /** A complete response: delivered as it is if the gateway parses it as the next response. */
    private static final String POISON = "HTTP/1.1 200 OK\r\nContent-Length: 6\r\nSet-Cookie: poisoned=1\r\n\r\nPOISON";
    /** An unfinished head: the next real response on the connection completes it (a header injection). */
    private static final String HALF_HEAD = "HTTP/1.1 200 OK\r\nSet-Cookie: poisoned=1\r\nX-Pad: ";
    private static final long LATE_MILLIS = 300;

    private DirtyBackend backend;
    private Gateway gw;

    @BeforeEach
    void start() throws IOException {
        backend = new DirtyBackend();
        gw = GatewayFixture.start(GatewayFixture.simple(
                List.of(new HostConfig("127.0.0.1", backend.port(), 1)), HttpOptions.defaults()));
    }

    @AfterEach
    void stop() throws IOException {
        gw.close();
        backend.close();
    }

    @Test
    void aBodyArrivingLateAfterAHeadResponseNeverReachesTheNextClient() throws Exception {
        try (RawClient attacker = new RawClient(gw.port("web")); RawClient victim = new RawClient(gw.port("web"))) {
            RawClient.Response head = attacker.send("HEAD /head-late HTTP/1.1\r\nHost: h\r\n\r\n").readHead();
            assertThat(head.status()).isEqualTo(200);
            // within the 300 ms before the upstream sends the body it announced
            RawClient.Response r = victim.send("GET /victim HTTP/1.1\r\nHost: h\r\n\r\n").read();
            assertVictimGotItsOwnResponse(r);
        }
        assertRetired("body_not_allowed");
    }

    @Test
    void aBodyOnA204NeverReachesTheNextClient() throws Exception {
        try (RawClient attacker = new RawClient(gw.port("web")); RawClient victim = new RawClient(gw.port("web"))) {
            assertThat(attacker.send("GET /204-late HTTP/1.1\r\nHost: h\r\n\r\n").read().status()).isEqualTo(204);
            assertVictimGotItsOwnResponse(victim.send("GET /victim HTTP/1.1\r\nHost: h\r\n\r\n").read());
        }
        assertRetired("body_not_allowed");
    }

    @Test
    void aChunkedBodyOnA304NeverReachesTheNextClient() throws Exception {
        try (RawClient attacker = new RawClient(gw.port("web")); RawClient victim = new RawClient(gw.port("web"))) {
            assertThat(attacker.send("GET /304-late HTTP/1.1\r\nHost: h\r\n\r\n").read().status()).isEqualTo(304);
            assertVictimGotItsOwnResponse(victim.send("GET /victim HTTP/1.1\r\nHost: h\r\n\r\n").read());
        }
        assertRetired("body_not_allowed");
    }

    @Test
    void aSwitchingProtocolsResponseRetiresItsConnection() throws Exception {
        // a 101 the gateway did not ask for, then a final response, then bytes of "the other protocol"
        try (RawClient attacker = new RawClient(gw.port("web")); RawClient victim = new RawClient(gw.port("web"))) {
            assertThat(attacker.send("GET /101-late HTTP/1.1\r\nHost: h\r\n\r\n").read().body()).isEqualTo("ok");
            assertVictimGotItsOwnResponse(victim.send("GET /victim HTTP/1.1\r\nHost: h\r\n\r\n").read());
        }
        assertRetired("body_not_allowed");
    }

    @Test
    void an1xxAnnouncingABodyRetiresItsConnection() throws Exception {
        try (RawClient attacker = new RawClient(gw.port("web")); RawClient victim = new RawClient(gw.port("web"))) {
            assertThat(attacker.send("GET /100-body-late HTTP/1.1\r\nHost: h\r\n\r\n").read().body()).isEqualTo("ok");
            assertVictimGotItsOwnResponse(victim.send("GET /victim HTTP/1.1\r\nHost: h\r\n\r\n").read());
        }
        assertRetired("body_not_allowed");
    }

    @Test
    void bytesBeyondContentLengthNeverBecomeTheNextClientsResponse() throws Exception {
        try (RawClient attacker = new RawClient(gw.port("web")); RawClient victim = new RawClient(gw.port("web"))) {
            // Content-Length 5, then an unfinished head in the same write
            RawClient.Response first = attacker.send("GET /extra HTTP/1.1\r\nHost: h\r\n\r\n").read();
            assertThat(first.status()).isEqualTo(200);
            assertThat(first.body()).isEqualTo("hello");
            assertVictimGotItsOwnResponse(victim.send("GET /victim HTTP/1.1\r\nHost: h\r\n\r\n").read());
        }
        assertRetired("after_response");
    }

    @Test
    void aPipelinedGetAfterAHeadGetsItsOwnResponse() throws Exception {
        try (RawClient c = new RawClient(gw.port("web"))) {
            // one write, so the gateway reads both requests at once: no timing involved
            c.send("HEAD /head-eager HTTP/1.1\r\nHost: h\r\n\r\nGET /victim HTTP/1.1\r\nHost: h\r\n\r\n");
            assertThat(c.readHead().status()).isEqualTo(200);
            assertVictimGotItsOwnResponse(c.read());
        }
        assertRetired("body_not_allowed");
    }

    @Test
    void bytesSentToAParkedConnectionCloseIt() throws Exception {
        try (RawClient c = new RawClient(gw.port("web"))) {
            // a clean exchange: the connection is parked, then the upstream sends half a head unasked
            assertThat(c.send("GET /then-half-head HTTP/1.1\r\nHost: h\r\n\r\n").read().body()).isEqualTo("clean");
            awaitClosed(0);
            assertVictimGotItsOwnResponse(c.send("GET /victim HTTP/1.1\r\nHost: h\r\n\r\n").read());
        }
        assertRetired("while_idle");
    }

    @Test
    void cleanExchangesKeepReusingOneConnection() throws Exception {
        try (RawClient c = new RawClient(gw.port("web"))) {
            for (int i = 0; i < 5; i++) {
                RawClient.Response r = c.send("GET /victim HTTP/1.1\r\nHost: h\r\n\r\n").read();
                assertThat(r.body()).isEqualTo("victim");
                r = c.send("HEAD /head-empty HTTP/1.1\r\nHost: h\r\n\r\n").readHead();
                assertThat(r.status()).isEqualTo(200);
                assertThat(c.send("GET /204 HTTP/1.1\r\nHost: h\r\n\r\n").read().status()).isEqualTo(204);
            }
        }
        assertThat(backend.accepted()).isEqualTo(1);
        assertThat(retired()).isZero();
    }

    /** The victim's own body, none of the attacker's bytes, and on a new upstream connection. */
    private void assertVictimGotItsOwnResponse(RawClient.Response r) throws InterruptedException {
        assertThat(r.headers()).doesNotContain("poisoned");
        assertThat(r.body()).isEqualTo("victim");
        assertThat(r.status()).isEqualTo(200);
        assertThat(backend.victimServedOn).containsOnly(1);
        awaitClosed(0);
        assertThat(backend.accepted()).isEqualTo(2);
    }

    private void awaitClosed(int connection) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(2); // well before the 4 s pool idle timeout
        while (!backend.closed.containsKey(connection) && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
        assertThat(backend.closed).as("the backend saw the dirty connection closed").containsKey(connection);
    }

    private void assertRetired(String reason) {
        Counter c = gw.meterRegistry().find("sluice.upstream.connections.retired").tag("cluster", "c")
                .tag("reason", reason).counter();
        assertThat(c).as("retired{reason=%s}", reason).isNotNull();
        assertThat(c.count()).isEqualTo(1.0);
        assertThat(retired()).isEqualTo(1.0);
    }

    private double retired() {
        return gw.meterRegistry().find("sluice.upstream.connections.retired").counters().stream()
                .mapToDouble(Counter::count).sum();
    }

    /** A keep-alive HTTP/1.1 backend on plain sockets; connection {@code n} is the n-th accepted, from 0. */
    private static final class DirtyBackend implements AutoCloseable {
        final Map<Integer, Boolean> closed = new ConcurrentHashMap<>();
        final List<Integer> victimServedOn = new CopyOnWriteArrayList<>();
        final SocketServer server;

        DirtyBackend() throws IOException {
            server = new SocketServer("dirty-backend", 50, this::serve);
        }

        int port() {
            return server.port();
        }

        int accepted() {
            return server.accepted();
        }

        private void serve(Socket s, int id) {
            try (InputStream in = s.getInputStream(); OutputStream out = s.getOutputStream()) {
                String requestLine;
                while ((requestLine = SocketServer.readRequestHead(in)) != null) {
                    String target = requestLine.split(" ")[1];
                    switch (target) {
                        case "/head-late" -> {
                            write(out, "HTTP/1.1 200 OK\r\nContent-Length: " + POISON.length() + "\r\n\r\n");
                            Thread.sleep(LATE_MILLIS);
                            write(out, POISON);
                        }
                        case "/head-eager" -> write(out, "HTTP/1.1 200 OK\r\nContent-Length: " + POISON.length()
                                + "\r\n\r\n" + POISON);
                        case "/head-empty" -> write(out, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
                        case "/204-late" -> {
                            write(out, "HTTP/1.1 204 No Content\r\nContent-Length: " + POISON.length() + "\r\n\r\n");
                            Thread.sleep(LATE_MILLIS);
                            write(out, POISON);
                        }
                        case "/204" -> write(out, "HTTP/1.1 204 No Content\r\n\r\n");
                        case "/304-late" -> {
                            write(out, "HTTP/1.1 304 Not Modified\r\nTransfer-Encoding: chunked\r\n\r\n");
                            Thread.sleep(LATE_MILLIS);
                            write(out, POISON);
                        }
                        case "/101-late" -> {
                            write(out, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\nConnection: upgrade\r\n\r\n"
                                    + "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
                            Thread.sleep(LATE_MILLIS);
                            write(out, POISON);
                        }
                        case "/100-body-late" -> {
                            write(out, "HTTP/1.1 100 Continue\r\nContent-Length: " + POISON.length() + "\r\n\r\n"
                                    + "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
                            Thread.sleep(LATE_MILLIS);
                            write(out, POISON);
                        }
                        case "/extra" -> write(out, "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello" + HALF_HEAD);
                        case "/then-half-head" -> {
                            write(out, "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nclean");
                            Thread.sleep(LATE_MILLIS);
                            write(out, HALF_HEAD);
                        }
                        case "/victim" -> {
                            victimServedOn.add(id);
                            write(out, "HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nvictim");
                        }
                        default -> write(out, "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n");
                    }
                }
            } catch (IOException | InterruptedException e) {
                // the gateway closed the connection (possibly while a late body was being written)
            } finally {
                closed.put(id, true);
            }
        }


        private static void write(OutputStream out, String s) throws IOException {
            out.write(s.getBytes(StandardCharsets.ISO_8859_1));
            out.flush();
        }

        @Override
        public void close() throws IOException {
            server.close();
        }
    }
}
