package io.sluice.server;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.sluice.core.config.AccessLogConfig;
import io.sluice.core.config.AdminConfig;
import io.sluice.core.config.BoltOptions;
import io.sluice.core.config.ClusterConfig;
import io.sluice.core.config.GatewayConfig;
import io.sluice.core.config.HostConfig;
import io.sluice.core.config.ListenerConfig;
import io.sluice.core.config.Protocol;
import io.sluice.core.config.RouteConfig;
import io.sluice.core.time.Ticker;
import io.sluice.server.testing.Ports;
import io.sluice.server.testing.SocketServer;
import io.sluice.server.warmup.WarmUp;
import io.sluice.server.warmup.WarmUpConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.OutputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

/** The warm start: before the listeners, on the ticker, never to configured upstreams, invisible in meters and access log. */
class WarmUpIT {

    @TempDir
    Path dir;

    private static SocketServer countingUpstream() throws Exception {
        return new SocketServer("warm-up-upstream", 50, (s, i) -> {
            try (s) {
                OutputStream out = s.getOutputStream();
                while (SocketServer.readRequestHead(s.getInputStream()) != null) {
                    out.write("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok".getBytes(StandardCharsets.US_ASCII));
                    out.flush();
                }
            }
        });
    }

    private GatewayConfig config(int httpPort, int boltPort, int adminPort, int upstreamPort, Path accessLog) {
        ListenerConfig http = new ListenerConfig("http", Protocol.HTTP, "127.0.0.1", httpPort, List.of(RouteConfig.to("up")), null, null);
        ListenerConfig bolt = new ListenerConfig("bolt", Protocol.BOLT, "127.0.0.1", boltPort, List.of(), null,
                new BoltOptions(BoltOptions.defaults().maxFrameLength(), BoltOptions.defaults().idleTimeout(), "up-bolt"));
        ClusterConfig up = ClusterConfig.of("up", List.of(new HostConfig("127.0.0.1", upstreamPort, 1)));
        ClusterConfig upBolt = new ClusterConfig("up-bolt", Protocol.BOLT, null, List.of(new HostConfig("127.0.0.1", upstreamPort, 1)),
                null, null, null, null, null, null, ClusterConfig.DEFAULT_PANIC_THRESHOLD, false, 2, 1.0);
        return GatewayConfig.builder().listeners(http, bolt).clusters(up, upBolt)
                .admin(new AdminConfig(true, "127.0.0.1", adminPort))
                .accessLog(new AccessLogConfig(true, accessLog.toString(), AccessLogConfig.disabled().format(),
                        AccessLogConfig.disabled().queueSize()))
                .drainTimeout(Duration.ZERO).build();
    }

    @Test
    void warmUpRunsBeforeAnythingAcceptsNeverTouchesUpstreamsAndLeavesNoTrace() throws Exception {
        try (SocketServer upstream = countingUpstream()) {
            int httpPort = Ports.free();
            int boltPort = Ports.freeExcept(httpPort);
            int adminPort = Ports.freeExcept(boltPort);
            Path log = dir.resolve("access.log");
            List<String> seenDuringWarmUp = new CopyOnWriteArrayList<>();
            Gateway gw = Gateway.builder().config(config(httpPort, boltPort, adminPort, upstream.port(), log))
                    .warmUp(new WarmUpConfig(true, Duration.ofMillis(300)))
                    .warmUpObserver(round -> {
                        if (round == 1) {
                            seenDuringWarmUp.add("http refuses=" + Ports.refuses(httpPort));
                            seenDuringWarmUp.add("bolt refuses=" + Ports.refuses(boltPort));
                            seenDuringWarmUp.add("admin refuses=" + Ports.refuses(adminPort));
                        }
                    }).build();
            try {
                gw.start().orTimeout(30, TimeUnit.SECONDS).join();
                assertThat(seenDuringWarmUp).containsExactly("http refuses=true", "bolt refuses=true", "admin refuses=true");
                WarmUp.Result r = gw.warmUpResult();
                assertThat(r.failure()).isNull();
                assertThat(r.rounds()).isGreaterThanOrEqualTo(1);
                assertThat(r.httpRequests()).isGreaterThan(0);
                assertThat(r.boltRequests()).isGreaterThan(0);
                assertThat(upstream.accepted()).as("connections to the configured upstream during warm-up").isZero();
                MeterRegistry reg = gw.meterRegistry();
                assertThat(reg.find("sluice.requests").counters()).allSatisfy(c -> assertThat(c.count()).isZero());
                assertThat(reg.getMeters()).noneMatch(m -> m.getId().getTags().toString().contains("warm-up"));

                HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
                HttpResponse<String> ready = client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + adminPort + "/ready"))
                        .timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.ofString());
                assertThat(ready.statusCode()).isEqualTo(200);
                HttpResponse<String> real = client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + httpPort + "/x"))
                        .timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.ofString());
                assertThat(real.statusCode()).isEqualTo(200);
                assertThat(upstream.accepted()).isEqualTo(1);
                double total = reg.find("sluice.requests").counters().stream().mapToDouble(Counter::count).sum();
                assertThat(total).as("only the real request is counted").isEqualTo(1.0);
            } finally {
                gw.shutdown().get(10, TimeUnit.SECONDS);
            }
            assertThat(Files.readAllLines(log)).hasSize(1).allSatisfy(l -> assertThat(l).doesNotContain("warm-up"));
        }
    }

    @Test
    void warmUpIsBoundedOnTheInjectedTicker() throws Exception {
        try (SocketServer upstream = countingUpstream()) {
            AtomicLong now = new AtomicLong(1_000);
            Ticker ticker = now::get;
            // 60 s on the ticker: the test passes in milliseconds only because the ticker, not the wall clock, ends it
            Gateway gw = Gateway.builder().config(config(0, 0, 0, upstream.port(), dir.resolve("a.log")))
                    .ticker(ticker)
                    .warmUp(new WarmUpConfig(true, Duration.ofSeconds(60)))
                    .warmUpObserver(round -> {
                        if (round == 2) {
                            now.addAndGet(Duration.ofSeconds(60).toNanos() - 1); // still inside: one more round
                        } else if (round == 3) {
                            now.addAndGet(1);
                        }
                    }).build();
            try {
                gw.start().orTimeout(30, TimeUnit.SECONDS).join();
                assertThat(gw.warmUpResult().rounds()).isEqualTo(3);
                assertThat(gw.warmUpResult().nanos()).isEqualTo(Duration.ofSeconds(60).toNanos());
                assertThat(upstream.accepted()).isZero();
            } finally {
                gw.shutdown().get(10, TimeUnit.SECONDS);
            }
        }
    }

    @Test
    void embeddedGatewayRunsNoWarmUpUnlessAsked() throws Exception {
        try (SocketServer upstream = countingUpstream()) {
            Gateway gw = Gateway.builder().config(config(0, 0, 0, upstream.port(), dir.resolve("b.log"))).build();
            try {
                gw.start().orTimeout(30, TimeUnit.SECONDS).join();
                assertThat(gw.warmUpResult()).isNull();
            } finally {
                gw.shutdown().get(10, TimeUnit.SECONDS);
            }
        }
    }

    @Test
    void theJarFlagTurnsItOff() {
        assertThat(Main.parse(new String[] {"--no-warm-up"}).noWarmUp()).isTrue();
        assertThat(Main.parse(new String[] {"-c", "x.json", "--no-warm-up"}).noWarmUp()).isTrue();
        assertThat(Main.parse(new String[] {}).noWarmUp()).isFalse();
    }
}
