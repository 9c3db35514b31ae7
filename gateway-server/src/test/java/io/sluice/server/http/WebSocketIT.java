package io.sluice.server.http;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.sluice.core.config.AdminConfig;
import io.sluice.core.config.ClusterConfig;
import io.sluice.core.config.GatewayConfig;
import io.sluice.core.config.HostConfig;
import io.sluice.core.config.ListenerConfig;
import io.sluice.core.config.RouteConfig;
import io.sluice.core.config.RouteMatch;
import io.sluice.core.config.StringMatch;
import io.sluice.core.config.RouteRules;
import io.sluice.core.config.TransportConfig;
import io.sluice.server.Gateway;
import io.sluice.server.testing.RawClient;
import io.sluice.server.testing.WebSocketBackend;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.WebSocket;
import java.net.http.WebSocketHandshakeException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * WebSocket through the gateway with real peers on loopback: the JDK {@link WebSocket} client and
 * a server built from Netty's WebSocket codec ({@link WebSocketBackend}).
 */
@Timeout(30)
class WebSocketIT {

    static WebSocketBackend backend;
    static Gateway gw;
    static final MeterRegistry registry = new SimpleMeterRegistry();
    static final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    @BeforeAll
    static void start() throws Exception {
        backend = WebSocketBackend.start();
        ClusterConfig c = ClusterConfig.of("c", List.of(new HostConfig("127.0.0.1", backend.port(), 1)));
        RouteConfig none = new RouteConfig("none", new RouteMatch(List.of(), StringMatch.prefix("/none"), List.of(),
                List.of(), null, null), "c", "/ws", null, null, null, RouteRules.builder().upgrades(List.of()).build());
        ListenerConfig l = ListenerConfig.builder().name("web").routes(none, RouteConfig.to("c")).build();
        GatewayConfig config = GatewayConfig.builder().listeners(l).clusters(c).admin(AdminConfig.disabled())
                .transport(TransportConfig.builder().workerThreads(1).backlog(128).build())
                .drainTimeout(Duration.ofSeconds(1)).build();
        gw = Gateway.builder().config(config).meterRegistry(registry).random(new SplittableRandom(7))
                .build().start().orTimeout(30, TimeUnit.SECONDS).join();
    }

    @AfterAll
    static void stop() {
        if (gw != null) {
            gw.close();
        }
        if (backend != null) {
            backend.close();
        }
    }

    /** Every event the client saw, as text; data of fragmented messages joined. */
    static final class Recorder implements WebSocket.Listener {
        final BlockingQueue<String> events = new LinkedBlockingQueue<>();
        final boolean autoRequest;
        final AtomicLong binaryBytes = new AtomicLong();
        private final StringBuilder text = new StringBuilder();
        private final StringBuilder binary = new StringBuilder();
        private final boolean countOnly;

        Recorder(boolean autoRequest, boolean countOnly) {
            this.autoRequest = autoRequest;
            this.countOnly = countOnly;
        }

        @Override
        public void onOpen(WebSocket ws) {
            if (autoRequest) {
                ws.request(1);
            }
        }

        @Override
        public CompletionStage<?> onText(WebSocket ws, CharSequence data, boolean last) {
            text.append(data);
            if (last) {
                events.add("text:" + text);
                text.setLength(0);
            }
            ws.request(1);
            return null;
        }

        @Override
        public CompletionStage<?> onBinary(WebSocket ws, ByteBuffer data, boolean last) {
            binaryBytes.addAndGet(data.remaining());
            if (!countOnly) {
                binary.append(StandardCharsets.ISO_8859_1.decode(data));
                if (last) {
                    events.add("binary:" + binary);
                    binary.setLength(0);
                }
            }
            if (autoRequest) {
                ws.request(1);
            }
            return null;
        }

        @Override
        public CompletionStage<?> onPong(WebSocket ws, ByteBuffer message) {
            events.add("pong:" + StandardCharsets.US_ASCII.decode(message));
            ws.request(1);
            return null;
        }

        @Override
        public CompletionStage<?> onClose(WebSocket ws, int statusCode, String reason) {
            events.add("close:" + statusCode + ":" + reason);
            return null;
        }

        @Override
        public void onError(WebSocket ws, Throwable error) {
            events.add("error:" + error);
        }

        String next() throws InterruptedException {
            String e = events.poll(10, TimeUnit.SECONDS);
            assertThat(e).as("an event within 10 s").isNotNull();
            return e;
        }
    }

    private static WebSocket open(String path, Recorder r) {
        return http.newWebSocketBuilder().connectTimeout(Duration.ofSeconds(5))
                .buildAsync(URI.create("ws://127.0.0.1:" + gw.port("web") + path), r).orTimeout(10, TimeUnit.SECONDS).join();
    }

    private static double meter(String name) {
        var g = registry.find(name).gauge();
        return g != null ? g.value() : registry.get(name).counter().count();
    }

    private static void awaitMeter(String name, double value) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (meter(name) != value && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
        assertThat(meter(name)).as(name).isEqualTo(value);
    }

    @Test
    void echoesTextBinaryFragmentsPingAndClose() throws Exception {
        double before = meter("sluice.upgrades");
        Recorder r = new Recorder(true, false);
        WebSocket ws = open("/ws", r);
        assertThat(backend.lastHeaders()).containsEntry("upgrade", "websocket").containsKey("sec-websocket-key")
                .containsEntry("sec-websocket-version", "13");
        assertThat(backend.lastHeaders().get("connection")).isEqualToIgnoringCase("upgrade");
        awaitMeter("sluice.upgrades.active", 1);
        assertThat(meter("sluice.upgrades")).isEqualTo(before + 1);

        ws.sendText("hello", true).join();
        assertThat(r.next()).isEqualTo("text:hello");
        ws.sendBinary(ByteBuffer.wrap(new byte[] {'b', 'i', 'n'}), true).join();
        assertThat(r.next()).isEqualTo("binary:bin");
        ws.sendText("frag", false).join();
        ws.sendText("mented", true).join();
        assertThat(r.next()).isEqualTo("text:fragmented");
        ws.sendPing(ByteBuffer.wrap("p1".getBytes(StandardCharsets.US_ASCII))).join();
        assertThat(r.next()).isEqualTo("pong:p1");
        for (int i = 0; i < 2000; i++) {
            ws.sendText("m" + i, true).join();
        }
        for (int i = 0; i < 2000; i++) {
            assertThat(r.next()).isEqualTo("text:m" + i);
        }
        ws.sendClose(4001, "bye").join();
        assertThat(r.next()).isEqualTo("close:4001:bye");
        awaitMeter("sluice.upgrades.active", 0);
    }

    /**
     * A 96 MiB stream to a client that first reads nothing, then everything: the backend stalls
     * while the client does not read (the gateway stops reading it: only socket buffers fill), and
     * every byte arrives once it reads. The client is a plain socket doing the handshake itself, so
     * what it reads is exactly the server's frames (64 KiB binary frames, 10 header bytes each).
     * Loopback socket buffers autotune up to {@code tcp_rmem}/{@code tcp_wmem} maxima (here up to
     * 32 MiB + 4 MiB per connection), so the bound says "held back", not an exact count: without
     * backpressure the whole stream leaves the backend at once (seen: the full 96 MiB).
     */
    @Test
    void slowReaderHoldsTheUpstreamBackAndA96MbStreamArrivesWhole() throws Exception {
        long total = 96L << 20;
        long frames = total / (64 * 1024);
        try (Socket s = new Socket("127.0.0.1", gw.port("web"))) {
            s.setSoTimeout(3_000);
            OutputStream out = s.getOutputStream();
            out.write(("GET /ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                    + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
            InputStream in = s.getInputStream();
            String head = readHead(in);
            assertThat(head).startsWith("HTTP/1.1 101 ").containsIgnoringCase("Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=");
            long start = backend.flushed();
            out.write(maskedText("flood:" + total));
            out.flush();
            long last = -1;
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
            while (System.nanoTime() < deadline) {
                long now = backend.flushed();
                if (now == last && now > start) {
                    break;
                }
                last = now;
                Thread.sleep(200);
            }
            long stalledAt = backend.flushed() - start;
            assertThat(stalledAt).as("bytes the backend got out while the client read nothing (socket buffers only)")
                    .isGreaterThan(0).isLessThan(64L << 20);
            byte[] buf = new byte[1 << 16];
            long want = total + frames * 10;
            long got = 0;
            while (got < want) {
                int n;
                try {
                    n = in.read(buf);
                } catch (java.net.SocketTimeoutException e) {
                    throw new AssertionError("read " + got + " of " + want + "; backend flushed " + (backend.flushed() - start), e);
                }
                if (n < 0) {
                    break;
                }
                got += n;
            }
            assertThat(got).as("stalled at %d", stalledAt).isEqualTo(want);
        }
    }

    private static String readHead(InputStream in) throws IOException {
        StringBuilder sb = new StringBuilder();
        while (!sb.toString().endsWith("\r\n\r\n")) {
            int c = in.read();
            if (c < 0) {
                break;
            }
            sb.append((char) c);
        }
        return sb.toString();
    }

    /** A masked client text frame (RFC 6455 §5.2), payload under 126 bytes, mask 0. */
    private static byte[] maskedText(String text) {
        byte[] p = text.getBytes(StandardCharsets.US_ASCII);
        byte[] f = new byte[6 + p.length];
        f[0] = (byte) 0x81;
        f[1] = (byte) (0x80 | p.length);
        System.arraycopy(p, 0, f, 6, p.length); // a zero mask leaves the payload as it is
        return f;
    }

    /** Drain waits for an open tunnel (it is a request in flight) and closes it at the drain deadline. */
    @Test
    void drainClosesOpenTunnelsAtItsDeadline() throws Exception {
        ClusterConfig c = ClusterConfig.of("c", List.of(new HostConfig("127.0.0.1", backend.port(), 1)));
        GatewayConfig config = GatewayConfig.builder().listeners(ListenerConfig.builder().name("web").routes(RouteConfig.to("c")).build())
                .clusters(c).admin(AdminConfig.disabled())
                .transport(TransportConfig.builder().workerThreads(1).backlog(128).build())
                .drainTimeout(Duration.ofMillis(700)).build();
        Gateway own = Gateway.builder().config(config).random(new SplittableRandom(7))
                .build().start().orTimeout(30, TimeUnit.SECONDS).join();
        Recorder r = new Recorder(true, false);
        WebSocket ws = http.newWebSocketBuilder().connectTimeout(Duration.ofSeconds(5))
                .buildAsync(URI.create("ws://127.0.0.1:" + own.port("web") + "/ws"), r).orTimeout(10, TimeUnit.SECONDS).join();
        ws.sendText("before drain", true).join();
        assertThat(r.next()).isEqualTo("text:before drain");
        long start = System.nanoTime();
        own.close();
        long tookMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        assertThat(tookMillis).as("close waited for the tunnel until the drain timeout").isGreaterThanOrEqualTo(650);
        assertThat(r.next()).startsWith("close:"); // the client saw its connection end
    }

    @Test
    void routeWithoutUpgradesForwardsAPlainRequest() throws Exception {
        try (RawClient c = new RawClient(gw.port("web"))) {
            c.send("GET /none HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                    + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n");
            RawClient.Response resp = c.read();
            assertThat(resp.status()).isEqualTo(200);
            assertThat(resp.body()).isEqualTo("plain");
        }
        assertThat(backend.lastHeaders()).doesNotContainKey("upgrade");
        assertThatThrownBy(() -> open("/none", new Recorder(true, false)))
                .isInstanceOf(CompletionException.class).hasCauseInstanceOf(WebSocketHandshakeException.class);
    }
}
