package io.sluice.server;

import io.sluice.core.config.AdminConfig;
import io.sluice.core.config.ClusterConfig;
import io.sluice.core.config.ConfigException;
import io.sluice.core.config.GatewayConfig;
import io.sluice.core.config.HostConfig;
import io.sluice.core.config.HttpOptions;
import io.sluice.core.config.ListenerConfig;
import io.sluice.core.config.Protocol;
import io.sluice.core.config.RouteConfig;
import io.sluice.core.config.TransportConfig;
import io.sluice.server.testing.Ports;
import io.sluice.server.testing.RawClient;
import io.sluice.server.testing.TestBackend;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * {@code transport.reuse_port}: one listening socket per worker on the listener's port (what
 * {@code ss -ltn} shows), all of them serving, all of them gone when the gateway stops or a
 * reload moves the listener; off, a single socket.
 */
class ReusePortIT {

    /** LISTEN sockets on a local port, from /proc/net/tcp and tcp6 (what {@code ss -ltn sport = :PORT} counts). */
    private static int listening(int port) throws IOException {
        String hexPort = String.format(Locale.ROOT, ":%04X", port);
        int n = 0;
        for (String f : List.of("/proc/net/tcp", "/proc/net/tcp6")) {
            Path p = Path.of(f);
            if (!Files.exists(p)) {
                continue;
            }
            for (String line : Files.readAllLines(p)) {
                String[] cols = line.trim().split("\\s+");
                if (cols.length > 3 && cols[1].endsWith(hexPort) && cols[3].equals("0A")) {
                    n++;
                }
            }
        }
        return n;
    }

    private static GatewayConfig config(TestBackend b, int port, String type, int workers, boolean reusePort) {
        ListenerConfig l = new ListenerConfig("web", Protocol.HTTP, "127.0.0.1", port, List.of(RouteConfig.to("c")),
                HttpOptions.defaults(), null);
        return new GatewayConfig(List.of(l), List.of(ClusterConfig.of("c", List.of(new HostConfig("127.0.0.1", b.port(), 1)))),
                AdminConfig.disabled(), new TransportConfig(type, workers, 128, reusePort), Duration.ofSeconds(5));
    }

    private static Gateway start(GatewayConfig c) {
        return Gateway.builder().config(c).random(new SplittableRandom(7)).build().start().orTimeout(30, TimeUnit.SECONDS).join();
    }

    @Test
    void everyWorkerListensOnThePortAndEveryConnectionIsServed() throws Exception {
        try (TestBackend backend = TestBackend.start()) {
            Gateway g = start(config(backend, 0, "auto", 3, true));
            int port = g.port("web");
            try {
                assumeTrue(!g.transport().equals("nio"), "no epoll here: auto falls back to NIO, one socket");
                assertThat(listening(port)).as("sockets listening on the port").isEqualTo(3);
                List<RawClient> clients = new ArrayList<>();
                try {
                    for (int i = 0; i < 24; i++) { // connections the kernel spreads over the three sockets
                        clients.add(new RawClient(port));
                    }
                    for (RawClient c : clients) {
                        c.send("GET /x HTTP/1.1\r\nHost: t\r\n\r\n");
                    }
                    for (RawClient c : clients) {
                        assertThat(c.read().status()).isEqualTo(200);
                    }
                } finally {
                    for (RawClient c : clients) {
                        c.close();
                    }
                }
                assertThat(backend.requests()).isEqualTo(24);
            } finally {
                g.close();
            }
            assertThat(listening(port)).as("sockets left after close").isZero();
            assertThat(Ports.refuses(port)).isTrue();
        }
    }

    @Test
    void aReloadThatMovesTheListenerClosesEverySocketOfTheOldPort() throws Exception {
        int a = Ports.free();
        int b = Ports.freeExcept(a);
        try (TestBackend backend = TestBackend.start(); Gateway g = start(config(backend, a, "auto", 2, true))) {
            g.reload(config(backend, b, "auto", 2, true));
            assertThat(g.port("web")).isEqualTo(b);
            await().atMost(Duration.ofSeconds(5)).until(() -> Ports.refuses(a));
            assertThat(listening(a)).isZero();
            try (RawClient c = new RawClient(b)) {
                assertThat(c.send("GET /x HTTP/1.1\r\nHost: t\r\n\r\n").read().status()).isEqualTo(200);
            }
            assumeTrue(!g.transport().equals("nio"), "no epoll here");
            assertThat(listening(b)).isEqualTo(2);
        }
    }

    @Test
    void withoutReusePortOneSocketListens() throws Exception {
        try (TestBackend backend = TestBackend.start(); Gateway g = start(config(backend, 0, "auto", 3, false))) {
            assertThat(listening(g.port("web"))).isEqualTo(1);
            try (RawClient c = new RawClient(g.port("web"))) {
                assertThat(c.send("GET /x HTTP/1.1\r\nHost: t\r\n\r\n").read().status()).isEqualTo(200);
            }
        }
    }

    @Test
    void theNioTransportCannotShareAPort() throws Exception {
        try (TestBackend backend = TestBackend.start()) {
            assertThatThrownBy(() -> Gateway.builder().config(config(backend, 0, "nio", 2, true)).build())
                    .isInstanceOf(ConfigException.class)
                    .hasMessageContaining("reuse_port").hasMessageContaining("epoll or io_uring");
        }
    }
}
