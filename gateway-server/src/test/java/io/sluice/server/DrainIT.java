package io.sluice.server;

import io.sluice.core.config.GatewayConfig;
import io.sluice.core.config.HttpOptions;
import io.sluice.server.testing.GatewayFixture;
import io.sluice.server.testing.RawClient;
import io.sluice.server.testing.TestBackend;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.RepeatedTest;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Graceful shutdown under keep-alive load loses no request: several clients send GETs back to
 * back on their keep-alive connections while the gateway shuts down. Every request written must
 * get a complete response; the last one each client gets says {@code Connection: close}. Before
 * {@code http.drain_grace}, an idle keep-alive connection was closed the moment the drain began,
 * dropping a request already on its way ("closed without response").
 */
@Timeout(60)
class DrainIT {

    static final int CLIENTS = 8;

    TestBackend backend;

    @BeforeEach
    void startBackend() throws Exception {
        backend = TestBackend.start();
    }

    @AfterEach
    void stopBackend() {
        backend.close();
    }

    @RepeatedTest(3)
    void noRequestIsLostWhenTheGatewayDrainsUnderKeepAliveLoad() throws Exception {
        GatewayConfig config = GatewayFixture.simple(List.of(GatewayFixture.host(backend, 1)), HttpOptions.defaults());
        Gateway gw = GatewayFixture.start(config);
        int port = gw.port("web");
        AtomicInteger ok = new AtomicInteger();
        AtomicInteger closed = new AtomicInteger();
        AtomicInteger lost = new AtomicInteger();
        AtomicReference<String> firstLoss = new AtomicReference<>();
        CountDownLatch done = new CountDownLatch(CLIENTS);
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < CLIENTS; i++) {
            Thread t = new Thread(() -> {
                try (RawClient c = new RawClient(port)) {
                    for (;;) {
                        RawClient.Response r;
                        try {
                            c.send("GET /hello HTTP/1.1\r\nHost: a\r\n\r\n");
                            r = c.read();
                        } catch (IOException e) {
                            r = null;
                            firstLoss.compareAndSet(null, e.toString());
                        }
                        if (r == null) {
                            lost.incrementAndGet(); // written, but the connection ended without a response
                            firstLoss.compareAndSet(null, "closed without response");
                            return;
                        }
                        assertThat(r.status()).isEqualTo(200);
                        if (r.hasHeader("connection: close")) {
                            closed.incrementAndGet();
                            return;
                        }
                        ok.incrementAndGet();
                    }
                } catch (IOException | RuntimeException | AssertionError e) {
                    firstLoss.compareAndSet(null, e.toString());
                    lost.incrementAndGet();
                } finally {
                    done.countDown();
                }
            }, "drain-client-" + i);
            t.setDaemon(true);
            t.start();
            threads.add(t);
        }
        Awaitility.await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(5))
                .until(() -> ok.get() >= 300 || done.getCount() < CLIENTS);
        assertThat(lost.get()).as("lost before the drain (first: %s)", firstLoss.get()).isZero();

        gw.shutdown().get(15, TimeUnit.SECONDS);
        assertThat(done.await(10, TimeUnit.SECONDS)).isTrue();
        assertThat(lost.get()).as("requests lost (first: %s)", firstLoss.get()).isZero();
        assertThat(closed.get()).as("clients told Connection: close").isEqualTo(CLIENTS);
    }
}
