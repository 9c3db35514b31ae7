package io.sluice.server.traffic;

import io.micrometer.core.instrument.Counter;
import io.sluice.core.config.GatewayConfig;
import io.sluice.server.Gateway;
import io.sluice.server.config.ConfigLoader;
import io.sluice.server.testing.RecordingBackend;
import io.sluice.server.testing.SocketServer;
import io.sluice.server.testing.TestBackend;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.InputStream;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Request mirroring over real sockets: the primary is a TestBackend, the shadow a RecordingBackend
 * (records exact bytes), a server that accepts and never answers, or a closed port.
 */
class MirrorIT {

    private final HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5)).build();
    private TestBackend primary;
    private RecordingBackend shadow;
    private SocketServer staller;
    private Gateway gw;

    @BeforeEach
    void backends() throws Exception {
        primary = TestBackend.start();
        shadow = new RecordingBackend();
        staller = new SocketServer("staller", 200, (s, i) -> {
            InputStream in = s.getInputStream();
            while (in.read() >= 0) {
                // reads everything, never answers
            }
        });
    }

    @AfterEach
    void stop() {
        for (AutoCloseable c : new AutoCloseable[] {gw, primary, shadow, staller}) {
            try {
                if (c != null) {
                    c.close();
                }
            } catch (Exception e) {
                // best effort
            }
        }
    }

    private static int closedPort() throws Exception {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    /** Listener "web": route "/plain" without mirrors, everything else mirrored as {@code mirror} says to cluster "shadow" at {@code shadowPort}. */
    private void start(String mirror, int shadowPort) {
        String json = """
                {
                  "listeners": [{"name": "web", "port": 0, "routes": [
                    {"match": {"path": {"prefix": "/plain"}}, "cluster": "primary"},
                    {"cluster": "primary", "mirrors": [%s]}
                  ]}],
                  "clusters": [
                    {"name": "primary", "hosts": ["127.0.0.1:%d"]},
                    {"name": "shadow", "hosts": ["127.0.0.1:%d"], "connect_timeout": "1s"}
                  ],
                  "admin": {"enabled": false}, "drain_timeout": "200ms",
                  "transport": {"worker_threads": 1}
                }
                """.formatted(mirror, primary.port(), shadowPort);
        GatewayConfig c = ConfigLoader.parse(json, "test").config();
        gw = Gateway.builder().config(c).random(new SplittableRandom(7)).build().start().orTimeout(30, TimeUnit.SECONDS).join();
    }

    private HttpResponse<String> send(String path, byte[] body) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + gw.port("web") + path))
                .timeout(Duration.ofSeconds(10));
        if (body != null) {
            b.POST(HttpRequest.BodyPublishers.ofByteArray(body));
        }
        return client.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    private double mirrored(String result) {
        Counter c = gw.meterRegistry().find("sluice.mirror.requests").tags("cluster", "shadow", "result", result).counter();
        return c == null ? 0 : c.count();
    }

    private static byte[] body(int n) {
        byte[] b = new byte[n];
        for (int i = 0; i < n; i++) {
            b[i] = (byte) ('A' + i % 23);
        }
        return b;
    }

    @Test
    void theShadowGetsTheSameRequestWithAShadowHost() throws Exception {
        start("{\"cluster\": \"shadow\", \"timeout\": \"1s\"}", shadow.port());
        byte[] payload = body(10_000);
        HttpResponse<String> r = send("/count?x=1", payload);
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(r.body()).startsWith("bytes=10000 ");
        await().atMost(Duration.ofSeconds(5)).until(() -> shadow.requests().size() == 1);
        String got = shadow.last();
        int split = got.indexOf("\r\n\r\n") + 4;
        String head = got.substring(0, split);
        assertThat(head).startsWith("POST /count?x=1 HTTP/1.1\r\n")
                .contains("\r\nHost: 127.0.0.1-shadow:" + gw.port("web") + "\r\n")
                .contains("\r\nConnection: close\r\n")
                .contains("\r\nContent-Length: 10000\r\n");
        assertThat(got.substring(split).getBytes(StandardCharsets.ISO_8859_1)).isEqualTo(payload);
        // a bodiless GET is mirrored at once
        assertThat(send("/hello", null).body()).isEqualTo("ok from " + primary.port());
        await().atMost(Duration.ofSeconds(5)).until(() -> shadow.requests().size() == 2);
        assertThat(shadow.last()).startsWith("GET /hello HTTP/1.1\r\n");
        await().atMost(Duration.ofSeconds(5)).until(() -> mirrored("sent") == 2);
        // the route without mirrors sends nothing to the shadow
        send("/plain", null);
        assertThat(shadow.requests()).hasSize(2);
    }

    @Test
    void aFractionIsExactAndBigBodiesAreNotMirrored() throws Exception {
        start("{\"cluster\": \"shadow\", \"percent\": 10, \"max_body_bytes\": \"1KiB\", \"timeout\": \"300ms\"}", shadow.port());
        for (int i = 0; i < 100; i++) {
            assertThat(send("/x" + i, null).statusCode()).isEqualTo(200);
        }
        await().atMost(Duration.ofSeconds(5)).until(() -> shadow.requests().size() == 10);
        // 10 more mirrors-to-be, with bodies over the limit: none is sent, each counted
        for (int i = 0; i < 100; i++) {
            assertThat(send("/count", body(4096)).body()).startsWith("bytes=4096 ");
        }
        assertThat(mirrored("too_large")).isEqualTo(10);
        Thread.sleep(100);
        assertThat(shadow.requests()).hasSize(10);
    }

    @Test
    void aStalledShadowNeitherSlowsNorFailsTheClientAndExcessMirrorsAreDropped() throws Exception {
        start("{\"cluster\": \"shadow\", \"max_concurrent\": 4, \"timeout\": \"20s\"}", staller.port());
        long[] without = new long[100];
        long[] with = new long[100];
        for (int round = 0; round < 2; round++) { // warm both paths, then measure
            for (int i = 0; i < 100; i++) {
                long t0 = System.nanoTime();
                assertThat(send("/plain/" + i, null).statusCode()).isEqualTo(200);
                without[i] = System.nanoTime() - t0;
                t0 = System.nanoTime();
                HttpResponse<String> r = send("/m/" + i, body(512));
                with[i] = System.nanoTime() - t0;
                assertThat(r.statusCode()).isEqualTo(200);
            }
        }
        Arrays.sort(without);
        Arrays.sort(with);
        long p50Without = without[50];
        long p50With = with[50];
        long p90With = with[90];
        // the stalled shadow holds 4 slots; the primary's latency stays that of the unmirrored route
        assertThat(p50With).as("p50 with a stalled shadow %d µs vs %d µs without", p50With / 1000, p50Without / 1000)
                .isLessThan(2 * p50Without + TimeUnit.MILLISECONDS.toNanos(2));
        assertThat(p90With).isLessThan(TimeUnit.MILLISECONDS.toNanos(100));
        assertThat(mirrored("dropped")).isEqualTo(196);
        await().atMost(Duration.ofSeconds(5)).until(() -> staller.accepted() == 4);
        assertThat(mirrored("sent") + mirrored("failed") + mirrored("timeout")).isZero(); // all four still stalled
    }

    @Test
    void anUnreachableShadowIsCountedAndInvisible() throws Exception {
        start("{\"cluster\": \"shadow\"}", closedPort());
        for (int i = 0; i < 20; i++) {
            assertThat(send("/count", body(100)).body()).startsWith("bytes=100 ");
        }
        await().atMost(Duration.ofSeconds(5)).until(() -> mirrored("failed") == 20);
    }
}
