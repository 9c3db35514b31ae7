package io.sluice.server;

import io.sluice.core.config.AdminConfig;
import io.sluice.core.config.ClusterConfig;
import io.sluice.core.config.GatewayConfig;
import io.sluice.core.config.HealthCheckConfig;
import io.sluice.core.config.HostConfig;
import io.sluice.core.config.HttpOptions;
import io.sluice.core.config.ListenerConfig;
import io.sluice.core.config.Protocol;
import io.sluice.core.config.RouteConfig;
import io.sluice.core.config.RouteMatch;
import io.sluice.core.config.TransportConfig;
import io.sluice.server.testing.TestBackend;
import org.junit.jupiter.api.Test;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** What {@code GET /metrics} shows after real traffic, and what a reload deletes from it. */
class MetricsIT {

    private final HttpClient http = HttpClient.newHttpClient();

    private HttpResponse<String> get(int port, String path) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .timeout(Duration.ofSeconds(10)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    /** The value of the one series whose line starts with {@code prefix} (name and tags, in Prometheus' order). */
    private static double value(String scrape, String prefix) {
        Matcher m = Pattern.compile("(?m)^" + Pattern.quote(prefix) + " (\\S+)$").matcher(scrape);
        assertThat(m.find()).as("series %s in%n%s", prefix, scrape).isTrue();
        return Double.parseDouble(m.group(1));
    }

    private static GatewayConfig config(TestBackend b, int deadPort, boolean withGone, boolean metricsOn) {
        HealthCheckConfig hc = HealthCheckConfig.builder().interval(Duration.ofMillis(100)).timeout(Duration.ofMillis(500))
                .healthyThreshold(1).unhealthyThreshold(1).build();
        ClusterConfig c = ClusterConfig.of("c", List.of(new HostConfig("127.0.0.1", b.port(), 1))).withHealthCheck(hc);
        ClusterConfig dead = ClusterConfig.of("dead", List.of(new HostConfig("127.0.0.1", deadPort, 1)));
        ClusterConfig gone = ClusterConfig.of("gone", List.of(new HostConfig("127.0.0.1", b.port(), 1)));
        List<RouteConfig> routes = new ArrayList<>();
        routes.add(new RouteConfig("to-dead", RouteMatch.pathPrefix("/dead"), "dead", null, null));
        if (withGone) {
            routes.add(new RouteConfig("to-gone", RouteMatch.pathPrefix("/gone"), "gone", null, null));
        }
        routes.add(new RouteConfig("main", RouteMatch.pathPrefix("/"), "c", null, null));
        ListenerConfig web = new ListenerConfig("web", Protocol.HTTP, "127.0.0.1", 0, routes, HttpOptions.defaults(), null);
        return new GatewayConfig(List.of(web), withGone ? List.of(c, dead, gone) : List.of(c, dead),
                new AdminConfig(true, "127.0.0.1", 0, metricsOn), new TransportConfig("auto", 1, 128), Duration.ofSeconds(5));
    }

    private static int deadPort() throws Exception {
        try (ServerSocket s = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    @Test
    void trafficShowsUpByRouteClusterAndConnectionAndReloadDeletesWhatIsGone() throws Exception {
        int dead = deadPort();
        try (TestBackend b = TestBackend.start();
             Gateway g = Gateway.builder().config(config(b, dead, true, true)).random(new SplittableRandom(7))
                     .build().start().orTimeout(30, TimeUnit.SECONDS).join()) {
            int port = g.port("web");
            int admin = g.adminAddress().getPort();
            for (int i = 0; i < 3; i++) {
                assertThat(get(port, "/x").statusCode()).isEqualTo(200);
            }
            assertThat(get(port, "/status/503").statusCode()).isEqualTo(503);
            assertThat(get(port, "/gone").statusCode()).isEqualTo(200);
            assertThat(get(port, "/dead").statusCode()).isEqualTo(502);
            await().atMost(Duration.ofSeconds(5)).until(() -> value(get(admin, "/metrics").body(),
                    "sluice_health_check_attempts_total{cluster=\"c\",result=\"success\"}") >= 1);

            String m = get(admin, "/metrics").body();
            String web = "listener=\"web\",outcome=\"proxied\",protocol=\"http\",route=\"main\"";
            assertThat(value(m, "sluice_requests_total{" + web + ",status=\"2xx\"}")).isEqualTo(3);
            assertThat(value(m, "sluice_requests_total{" + web + ",status=\"5xx\"}")).isEqualTo(1);
            assertThat(value(m, "sluice_requests_total{listener=\"web\",outcome=\"connect_failure\",protocol=\"http\",route=\"to-dead\",status=\"5xx\"}")).isEqualTo(1);
            assertThat(value(m, "sluice_request_duration_seconds_count{listener=\"web\",protocol=\"http\",route=\"main\"}")).isEqualTo(4);
            assertThat(m).contains("sluice_request_duration_seconds_bucket{listener=\"web\",protocol=\"http\",route=\"main\",le=\"0.001\"}");
            // upstream, per cluster
            assertThat(value(m, "sluice_upstream_requests_total{cluster=\"c\"}")).isEqualTo(4);
            assertThat(value(m, "sluice_upstream_errors_total{cluster=\"c\",kind=\"5xx\"}")).isEqualTo(1);
            assertThat(value(m, "sluice_upstream_errors_total{cluster=\"dead\",kind=\"connect\"}")).isEqualTo(1);
            assertThat(value(m, "sluice_upstream_connections_opened_total{cluster=\"c\"}")).isEqualTo(1);
            assertThat(value(m, "sluice_upstream_connections_active{cluster=\"c\"}")).isEqualTo(1);
            assertThat(value(m, "sluice_upstream_connections_idle{cluster=\"c\"}")).isEqualTo(1);
            assertThat(value(m, "sluice_upstream_requests_active{cluster=\"c\"}")).isEqualTo(0);
            // downstream: the JDK client kept one connection alive for all six requests
            assertThat(value(m, "sluice_downstream_connections_accepted_total{listener=\"web\",protocol=\"http\"}")).isEqualTo(1);
            assertThat(value(m, "sluice_downstream_received_bytes_total{listener=\"web\",protocol=\"http\"}")).isGreaterThan(6 * 20);
            assertThat(value(m, "sluice_downstream_sent_bytes_total{listener=\"web\",protocol=\"http\"}")).isGreaterThan(6 * 40);
            // config, JVM, Netty
            assertThat(value(m, "sluice_config_version")).isEqualTo(1);
            assertThat(m).contains("sluice_config_hash ", "jvm_memory_used_bytes{", "jvm_gc_", "jvm_threads_live_threads",
                    "sluice_netty_allocator_memory_used_bytes{allocator=\"pooled\",memory=\"direct\"}",
                    "sluice_netty_direct_memory_used_bytes");
            assertThat(m).contains("route=\"to-gone\"", "cluster=\"gone\"");

            g.reload(config(b, dead, false, true));
            String after = get(admin, "/metrics").body();
            assertThat(after).doesNotContain("route=\"to-gone\"", "cluster=\"gone\"");
            assertThat(value(after, "sluice_requests_total{" + web + ",status=\"2xx\"}")).as("kept routes keep counting").isEqualTo(3);
            assertThat(value(after, "sluice_config_version")).isEqualTo(2);
            assertThat(value(after, "sluice_config_hash")).isNotEqualTo(value(m, "sluice_config_hash"));
        }
    }

    @Test
    void metricsOffRecordsNothingAndStillProxies() throws Exception {
        try (TestBackend b = TestBackend.start();
             Gateway g = Gateway.builder().config(config(b, deadPort(), false, false))
                     .build().start().orTimeout(30, TimeUnit.SECONDS).join()) {
            assertThat(get(g.port("web"), "/x").statusCode()).isEqualTo(200);
            HttpResponse<String> m = get(g.adminAddress().getPort(), "/metrics");
            assertThat(m.statusCode()).isEqualTo(404);
            assertThat(m.body()).contains("admin.metrics: false");
            assertThat(g.meterRegistry().getMeters()).isEmpty();
            assertThat(get(g.adminAddress().getPort(), "/").body()).contains("metrics recording is off");
        }
    }
}
