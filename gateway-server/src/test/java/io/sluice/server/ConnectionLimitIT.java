package io.sluice.server;

import io.sluice.codec.testing.Bufs;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.netty.buffer.ByteBuf;
import io.sluice.codec.bolt.BoltFrames;
import io.sluice.codec.bolt.BoltFraming;
import io.sluice.core.config.AdminConfig;
import io.sluice.core.config.ClusterConfig;
import io.sluice.core.config.GatewayConfig;
import io.sluice.core.config.HostConfig;
import io.sluice.core.config.ListenerConfig;
import io.sluice.core.config.Protocol;
import io.sluice.core.config.RouteConfig;
import io.sluice.core.config.TransportConfig;
import io.sluice.server.testing.TestBackend;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.concurrent.TimeUnit;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * {@code max_connections} and {@code max_connections_per_client} on real sockets: a connection
 * over a limit is closed at accept (the client reads EOF or a reset without a byte) and counted in
 * {@code sluice.downstream.connections.refused{reason}}; a freed slot is usable again. HTTP, Bolt
 * and auto listeners share the accept path.
 */
@Timeout(60)
class ConnectionLimitIT {

    static TestBackend backend;
    static Gateway gw;
    static final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    final List<Socket> open = new ArrayList<>();

    @BeforeAll
    static void start() throws Exception {
        backend = TestBackend.start();
        ClusterConfig web = ClusterConfig.of("c", List.of(new HostConfig("127.0.0.1", backend.port(), 1)));
        ClusterConfig rpc = ClusterConfig.of("rpc", List.of(new HostConfig("127.0.0.1", 1, 1))).withProtocol(Protocol.BOLT);
        List<ListenerConfig> listeners = List.of(
                new ListenerConfig("web", Protocol.HTTP, "127.0.0.1", 0, List.of(RouteConfig.to("c")), null, null, 3, 0),
                new ListenerConfig("per", Protocol.HTTP, "127.0.0.1", 0, List.of(RouteConfig.to("c")), null, null, 100, 2),
                new ListenerConfig("bolt", Protocol.BOLT, "127.0.0.1", 0, List.of(), null, null, 1, 0),
                new ListenerConfig("auto", Protocol.AUTO, "127.0.0.1", 0, List.of(RouteConfig.to("c")), null, null, 1, 0));
        gw = Gateway.builder().config(new GatewayConfig(listeners, List.of(web, rpc), AdminConfig.disabled(),
                        new TransportConfig("auto", 2, 128), Duration.ofSeconds(2)))
                .meterRegistry(registry).random(new SplittableRandom(3)).build().start().orTimeout(30, TimeUnit.SECONDS).join();
    }

    @AfterAll
    static void stop() {
        gw.close();
        backend.close();
    }

    @AfterEach
    void closeSockets() throws IOException {
        for (Socket s : open) {
            s.close();
        }
    }

    private Socket connect(String from, String listener) throws IOException {
        Socket s = new Socket();
        open.add(s);
        if (from != null) {
            s.bind(new InetSocketAddress(from, 0));
        }
        s.setSoTimeout(5000);
        s.connect(new InetSocketAddress("127.0.0.1", gw.port(listener)));
        return s;
    }

    /** One GET on {@code s}: its status line. */
    private static String get(Socket s) throws IOException {
        s.getOutputStream().write("GET /hello HTTP/1.1\r\nHost: a\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
        InputStream in = s.getInputStream();
        StringBuilder line = new StringBuilder();
        int c;
        while ((c = in.read()) != -1 && c != '\n') {
            line.append((char) c);
        }
        // the rest of the response is left unread: the connection stays open and counted
        return line.toString().trim();
    }

    /** The gateway closed {@code s} without sending a byte (EOF or reset). */
    private static boolean refused(Socket s) throws IOException {
        try {
            s.getOutputStream().write("GET / HTTP/1.1\r\nHost: a\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
            return s.getInputStream().read() == -1;
        } catch (SocketTimeoutException e) {
            return false; // still open: not refused
        } catch (IOException e) {
            return true; // reset
        }
    }

    private static double refusedCount(String listener, String reason) {
        Counter c = registry.find("sluice.downstream.connections.refused").tags("listener", listener, "reason", reason).counter();
        return c == null ? 0 : c.count();
    }

    @Test
    void theListenerLimitRefusesTheConnectionOverItAndAFreedSlotIsUsableAgain() throws Exception {
        Socket a = connect(null, "web");
        Socket b = connect(null, "web");
        Socket c = connect(null, "web");
        assertThat(get(a)).startsWith("HTTP/1.1 200");
        assertThat(get(b)).startsWith("HTTP/1.1 200");
        assertThat(get(c)).startsWith("HTTP/1.1 200");

        assertThat(refused(connect(null, "web"))).isTrue();
        assertThat(refusedCount("web", "listener_limit")).isEqualTo(1);

        a.close();
        await().atMost(Duration.ofSeconds(5)).untilAsserted(() -> {
            Socket d = connect(null, "web");
            assertThat(get(d)).startsWith("HTTP/1.1 200");
        });
    }

    @Test
    void thePerClientLimitCountsEachAddressApart() throws Exception {
        assertThat(get(connect("127.0.0.1", "per"))).startsWith("HTTP/1.1 200");
        assertThat(get(connect("127.0.0.1", "per"))).startsWith("HTTP/1.1 200");
        assertThat(refused(connect("127.0.0.1", "per"))).isTrue();
        assertThat(refusedCount("per", "client_limit")).isEqualTo(1);
        assertThat(refusedCount("per", "listener_limit")).isZero();

        // another client address is not affected
        assertThat(get(connect("127.0.0.2", "per"))).startsWith("HTTP/1.1 200");
        assertThat(get(connect("127.0.0.2", "per"))).startsWith("HTTP/1.1 200");
    }

    @Test
    void boltAndAutoListenersShareTheAcceptPathAndItsLimit() throws Exception {
        ByteBufAllocator alloc = Bufs.ALLOC;
        Socket first = connect(null, "bolt");
        ByteBuf hb = BoltFrames.heartbeat(alloc, BoltFraming.V1, 7).takeBytes();
        byte[] bytes = new byte[hb.readableBytes()];
        hb.readBytes(bytes);
        hb.release();
        first.getOutputStream().write(bytes);
        assertThat(first.getInputStream().read()).as("heartbeat answered: the first connection is served").isEqualTo(1);
        assertThat(refused(connect(null, "bolt"))).isTrue();
        assertThat(refusedCount("bolt", "listener_limit")).isEqualTo(1);

        assertThat(get(connect(null, "auto"))).startsWith("HTTP/1.1 200");
        assertThat(refused(connect(null, "auto"))).isTrue();
        assertThat(refusedCount("auto", "listener_limit")).isEqualTo(1);
    }
}
