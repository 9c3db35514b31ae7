package io.sluice.bench.http;

import io.sluice.bench.LoadSupport;
import io.sluice.core.config.AdminConfig;
import io.sluice.core.config.ClusterConfig;
import io.sluice.core.config.GatewayConfig;
import io.sluice.core.config.HostConfig;
import io.sluice.core.config.ListenerConfig;
import io.sluice.core.config.RouteConfig;
import io.sluice.core.config.TransportConfig;
import io.sluice.server.Gateway;
import io.sluice.server.demo.DemoHttpBackend;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.ServerSocket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class HttpLoadIT {

    @Test
    void drivesTheGatewayAndPrintsAWrkStyleReport() throws Exception {
        try (DemoHttpBackend backend = DemoHttpBackend.start("127.0.0.1", 0, "");
             Gateway gw = Gateway.builder().config(new GatewayConfig(
                     List.of(ListenerConfig.http("web", "127.0.0.1", 0, List.of(RouteConfig.to("c")))),
                     List.of(ClusterConfig.of("c", List.of(new HostConfig("127.0.0.1", backend.port(), 1)))),
                     AdminConfig.disabled(), new TransportConfig("auto", 1, 128), Duration.ofSeconds(1)))
                     .build().start().orTimeout(30, TimeUnit.SECONDS).join()) {
            HttpLoad.Options o = HttpLoad.parse(new String[] {"-c", "4", "-t", "2", "-d", "1s", "--latency",
                    "-H", "X-Bench: 1", "http://127.0.0.1:" + gw.port("web") + "/"});
            HttpLoad.Result r = HttpLoad.run(o);
            assertThat(r.requests()).isGreaterThan(100);
            assertThat(r.errors()).isZero();
            assertThat(r.latency().count()).isEqualTo(r.requests());
            assertThat(r.bytesRead()).isGreaterThan(r.requests() * 50);
            ByteArrayOutputStream buf = new ByteArrayOutputStream();
            HttpLoad.print(o, r, new PrintStream(buf, true, StandardCharsets.UTF_8));
            String report = buf.toString(StandardCharsets.UTF_8);
            assertThat(report).contains("2 threads and 4 connections", "Latency Distribution", "99%",
                    r.requests() + " requests in", "Requests/sec:");
        }
    }

    @Test
    void aFixedRateSendsOnScheduleAndReportsTheTail() throws Exception {
        try (DemoHttpBackend backend = DemoHttpBackend.start("127.0.0.1", 0, "")) {
            HttpLoad.Options o = HttpLoad.parse(new String[] {"-c", "10", "-t", "1", "-d", "1s", "-R", "200", "-w", "200ms",
                    "http://127.0.0.1:" + backend.port() + "/"});
            HttpLoad.Result r = HttpLoad.run(o);
            // 200/s for 1 s over 10 connections: never more than the schedule allows. The lower bound
            // only says that it ran: on a loaded 2-core machine a 1-s run may send far fewer.
            assertThat(r.requests()).isBetween(1L, 210L);
            assertThat(r.errors()).isZero();
            ByteArrayOutputStream buf = new ByteArrayOutputStream();
            HttpLoad.print(o, r, new PrintStream(buf, true, StandardCharsets.UTF_8));
            assertThat(buf.toString(StandardCharsets.UTF_8)).contains("200 requests/s on a fixed schedule", "99.9%", "100%");
        }
    }

    @Test
    void aClosedPortCountsConnectErrorsAndEndsOnTime() throws Exception {
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        HttpLoad.Result r = HttpLoad.run(new HttpLoad.Options(URI.create("http://127.0.0.1:" + port + "/"), 2, 1,
                Duration.ofMillis(300), Duration.ofMillis(500), Map.of()));
        assertThat(r.requests()).isZero();
        assertThat(r.connectErrors()).isPositive();
        assertThat(r.seconds()).isLessThan(5);
    }

    @Test
    void rejectsBadArguments() {
        assertThatThrownBy(() -> HttpLoad.parse(new String[] {"-c", "1"}))
                .hasMessageContaining("http:// URL");
        assertThat(LoadSupport.duration("500ms")).isEqualTo(Duration.ofMillis(500));
        assertThat(LoadSupport.duration("2m")).isEqualTo(Duration.ofMinutes(2));
    }
}
