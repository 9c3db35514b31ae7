package io.sluice.server.http;

import io.micrometer.core.instrument.Counter;
import io.sluice.server.Gateway;
import io.sluice.server.testing.GatewayFixture;
import io.sluice.server.testing.RawClient;
import io.sluice.server.testing.TestBackend;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The default pool settings under many keep-alive clients (issue #23 item 8): with one event loop
 * and one host, {@value #CLIENTS} clients each keep one request in flight. Every upstream
 * connection the gateway opens is then needed by some moment's concurrency, and none should be
 * closed while the load lasts: idle connections expire by time ({@code pool.idle_timeout}, 4 s,
 * longer than this test's load), not by a count. A small idle cap would close connections parked
 * between two requests of a client and open new ones a moment later.
 */
class PoolChurnIT {

    private static final int CLIENTS = 256;
    private static final long WARM_UP_MILLIS = 500;
    private static final long STEADY_MILLIS = 1500;

    @Test
    void aSteadyKeepAliveLoadReusesItsUpstreamConnectionsWithTheDefaultPool() throws Exception {
        try (TestBackend backend = TestBackend.start();
             Gateway gw = GatewayFixture.start(GatewayFixture.simple(backend))) {
            ExecutorService pool = Executors.newFixedThreadPool(CLIENTS);
            try {
                CountDownLatch connected = new CountDownLatch(CLIENTS);
                AtomicLong phase = new AtomicLong(); // 0 warm-up, 1 steady, 2 stop
                AtomicLong steadyRequests = new AtomicLong();
                List<Future<?>> clients = new ArrayList<>();
                for (int i = 0; i < CLIENTS; i++) {
                    clients.add(pool.submit(() -> {
                        try (RawClient c = new RawClient(gw.port("web"))) {
                            connected.countDown();
                            connected.await(10, TimeUnit.SECONDS);
                            long p;
                            while ((p = phase.get()) < 2) {
                                RawClient.Response r = c.send("GET /hello HTTP/1.1\r\nHost: h\r\n\r\n").read();
                                assertThat(r.status()).isEqualTo(200);
                                if (p == 1) {
                                    steadyRequests.incrementAndGet();
                                }
                            }
                        }
                        return null;
                    }));
                }
                assertThat(connected.await(10, TimeUnit.SECONDS)).isTrue();
                Thread.sleep(WARM_UP_MILLIS);
                int openedAfterWarmUp = backend.connections();
                double closedAfterWarmUp = closed(gw);
                phase.set(1);
                Thread.sleep(STEADY_MILLIS);
                phase.set(2);
                for (Future<?> f : clients) {
                    f.get(20, TimeUnit.SECONDS);
                }
                int opened = backend.connections();
                double closedDuringSteady = closed(gw) - closedAfterWarmUp;
                String summary = "opened after warm-up " + openedAfterWarmUp + ", at the end " + opened
                        + ", closed during steady load " + closedDuringSteady + ", steady requests " + steadyRequests.get();
                assertThat(steadyRequests.get()).as(summary).isGreaterThan(CLIENTS);
                // never more upstream connections than requests in flight at once
                assertThat(opened).as(summary).isLessThanOrEqualTo(CLIENTS);
                // and none closed and reopened while the load lasts
                assertThat(closedDuringSteady).as(summary).isZero();
            } finally {
                pool.shutdownNow();
                assertThat(pool.awaitTermination(20, TimeUnit.SECONDS)).isTrue();
            }
        }
    }

    private static double closed(Gateway gw) {
        Counter c = gw.meterRegistry().find("sluice.upstream.connections.closed").tag("cluster", "c").counter();
        return c == null ? 0 : c.count();
    }
}
