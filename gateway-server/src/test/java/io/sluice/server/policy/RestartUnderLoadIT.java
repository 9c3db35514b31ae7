package io.sluice.server.policy;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.sluice.core.config.AdminConfig;
import io.sluice.core.config.CircuitBreakerConfig;
import io.sluice.core.config.ClusterConfig;
import io.sluice.core.config.GatewayConfig;
import io.sluice.core.config.HostConfig;
import io.sluice.core.config.ListenerConfig;
import io.sluice.core.config.OutlierConfig;
import io.sluice.core.config.RetryOn;
import io.sluice.core.config.RetryPolicyConfig;
import io.sluice.core.config.RouteConfig;
import io.sluice.core.config.TransportConfig;
import io.sluice.server.Gateway;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The example of docs/resilience.md as a run: steady GET load through the gateway to three
 * backends on real sockets; one backend crashes (listening socket closed, every open connection
 * reset) and comes back on the same port; the clients see no error.
 */
@Timeout(60)
class RestartUnderLoadIT {

    /** A keep-alive HTTP backend on a fixed port that can crash (RST everything) and restart. */
    static final class Restartable implements AutoCloseable {
        final int port;
        final AtomicInteger requests = new AtomicInteger();
        private final Set<Socket> open = ConcurrentHashMap.newKeySet();
        private volatile ServerSocket server;

        Restartable(int port) throws IOException {
            ServerSocket s = new ServerSocket();
            s.setReuseAddress(true);
            s.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 128);
            this.port = s.getLocalPort();
            listen(s);
        }

        private void listen(ServerSocket s) {
            server = s;
            Thread t = new Thread(() -> {
                while (!s.isClosed()) {
                    try {
                        Socket c = s.accept();
                        open.add(c);
                        Thread w = new Thread(() -> serve(c), "restartable-conn");
                        w.setDaemon(true);
                        w.start();
                    } catch (IOException e) {
                        return;
                    }
                }
            }, "restartable-accept");
            t.setDaemon(true);
            t.start();
        }

        private void serve(Socket c) {
            try (c; InputStream in = c.getInputStream(); OutputStream out = c.getOutputStream()) {
                int last4 = 0;
                int b;
                while ((b = in.read()) >= 0) {
                    last4 = last4 << 8 | b;
                    if (last4 == 0x0d0a0d0a) {
                        requests.incrementAndGet();
                        out.write("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok".getBytes(StandardCharsets.US_ASCII));
                        out.flush();
                        last4 = 0;
                    }
                }
            } catch (IOException e) {
                // reset by a crash, or the gateway closed it
            } finally {
                open.remove(c);
            }
        }

        /** The process dies: no more accepts, every open connection reset. */
        void crash() throws IOException {
            server.close();
            for (Socket c : open) {
                try {
                    c.setSoLinger(true, 0);
                    c.close();
                } catch (IOException e) {
                    // already gone
                }
            }
        }

        void restart() throws IOException {
            ServerSocket s = new ServerSocket();
            s.setReuseAddress(true);
            s.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 128);
            listen(s);
        }

        @Override
        public void close() throws IOException {
            crash();
        }
    }

    @Test
    void oneBackendOfThreeRestartsUnderLoadAndClientsSeeNoError() throws Exception {
        List<Restartable> backends = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            backends.add(new Restartable(0));
        }
        RouteConfig route = RouteConfig.to("api").withTimeout(Duration.ofSeconds(5)).withRetryPolicy(RetryPolicyConfig.builder()
                .retryOn(RetryOn.CONNECT_FAILURE, RetryOn.RESET, RetryOn.GATEWAY_ERROR).numRetries(2)
                .perTryTimeout(Duration.ofSeconds(2)).build());
        ClusterConfig cluster = ClusterConfig.builder().name("api")
                .hosts(backends.stream().map(b -> new HostConfig("127.0.0.1", b.port, 1)).toList())
                .connectTimeout(Duration.ofMillis(250))
                .outlier(OutlierConfig.builder().consecutiveFailures(3).baseEjectionTime(Duration.ofSeconds(10)).build())
                .circuitBreakers(CircuitBreakerConfig.builder().maxRequests(2048).budgetPercent(25).minRetryConcurrency(10).build())
                .build();
        GatewayConfig config = GatewayConfig.builder()
                .listeners(ListenerConfig.builder().name("web").routes(route).build()).clusters(cluster)
                .admin(AdminConfig.disabled()).transport(TransportConfig.builder().workerThreads(2).build())
                .drainTimeout(Duration.ofSeconds(1)).build();
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
        try (Gateway gw = Gateway.builder().config(config).meterRegistry(registry).random(new SplittableRandom(7)).build()
                .start().orTimeout(30, TimeUnit.SECONDS).join()) {
            URI uri = URI.create("http://127.0.0.1:" + gw.port("web") + "/x");
            AtomicBoolean stop = new AtomicBoolean();
            AtomicInteger ok = new AtomicInteger();
            List<String> errors = java.util.Collections.synchronizedList(new ArrayList<>());
            List<Thread> workers = new ArrayList<>();
            for (int w = 0; w < 16; w++) {
                Thread t = new Thread(() -> {
                    while (!stop.get()) {
                        try {
                            HttpResponse<String> r = client.send(HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(10))
                                    .GET().build(), HttpResponse.BodyHandlers.ofString());
                            if (r.statusCode() == 200) {
                                ok.incrementAndGet();
                            } else {
                                errors.add(r.statusCode() + " " + r.body().trim());
                            }
                        } catch (Exception e) {
                            errors.add(e.toString());
                        }
                    }
                }, "load-" + w);
                t.setDaemon(true);
                t.start();
                workers.add(t);
            }
            long t0 = System.nanoTime();
            Thread.sleep(1500);
            int before = ok.get();
            backends.get(1).crash();
            Thread.sleep(2000);
            backends.get(1).restart();
            Thread.sleep(1500);
            stop.set(true);
            for (Thread t : workers) {
                t.join(15_000);
            }
            long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
            double retried = registry.get("sluice.cluster.retries").tags("cluster", "api", "outcome", "retried")
                    .functionCounter().count();
            double success = registry.get("sluice.cluster.retries").tags("cluster", "api", "outcome", "success")
                    .functionCounter().count();
            double overflow = registry.get("sluice.cluster.retries").tags("cluster", "api", "outcome", "overflow")
                    .functionCounter().count();
            System.out.printf("restart under load: %d requests in %d ms (%d before the crash), %d errors, "
                            + "retries: %.0f retried, %.0f succeeded after a retry, %.0f refused by the budget; "
                            + "backend requests %d / %d / %d%n", ok.get() + errors.size(), ms, before, errors.size(),
                    retried, success, overflow, backends.get(0).requests.get(), backends.get(1).requests.get(),
                    backends.get(2).requests.get());
            assertThat(errors).as("client errors").isEmpty();
            assertThat(ok.get()).isGreaterThan(before);
            assertThat(retried).as("the crash was absorbed by retries").isPositive();
            assertThat(overflow).isZero();
        } finally {
            for (Restartable b : backends) {
                b.close();
            }
        }
    }
}
