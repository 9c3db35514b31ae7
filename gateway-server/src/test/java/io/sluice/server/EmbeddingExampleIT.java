package io.sluice.server;

import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.sluice.core.config.AdminConfig;
import io.sluice.core.config.ClusterConfig;
import io.sluice.core.config.GatewayConfig;
import io.sluice.core.config.HostConfig;
import io.sluice.core.config.ListenerConfig;
import io.sluice.core.config.RouteConfig;
import io.sluice.core.config.RouteMatch;
import io.sluice.server.testing.TestBackend;
import org.junit.jupiter.api.Test;

import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/** The example of docs/embedding.md, compiled and run; the doc must show exactly this code. */
class EmbeddingExampleIT {

    @Test
    void theDocumentedExampleRunsAndTheDocShowsIt() throws Exception {
        try (TestBackend a = TestBackend.start(); TestBackend b = TestBackend.start()) {
            int portA = a.port();
            int portB = b.port();
            String body;
            String scrape;
            PrometheusMeterRegistry metrics;
            InetSocketAddress admin;
            // --- example start
            metrics = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
            GatewayConfig config = GatewayConfig.builder()
                    .listeners(ListenerConfig.builder().name("web").port(0)          // 0: any free port
                            .routes(new RouteConfig("api", RouteMatch.pathPrefix("/api/"), "api", "/", Duration.ofSeconds(5)))
                            .build())
                    .clusters(ClusterConfig.builder().name("api")
                            .hosts(new HostConfig("127.0.0.1", portA, 1), new HostConfig("127.0.0.1", portB, 3))
                            .build())
                    .build();                                  // no admin listener unless .admin(..) asks for one
            try (Gateway gateway = Gateway.builder().config(config).meterRegistry(metrics).build().start().join()) {
                URI uri = URI.create("http://127.0.0.1:" + gateway.port("web") + "/api/hello");
                body = HttpClient.newHttpClient()
                        .send(HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.ofString())
                        .body();                                   // "ok from <port>", path rewritten to /hello
                scrape = metrics.scrape();                         // Prometheus text: sluice_requests_total{...}
                admin = gateway.adminAddress();                    // null: no admin port opened in your app
            }                                                      // close() drains in-flight requests
            // --- example end
            assertThat(body).isIn("ok from " + portA, "ok from " + portB);
            assertThat(scrape).contains("sluice_requests_total");
            assertThat(admin).isNull();
        }
        String source = Files.readString(Path.of("src/test/java/io/sluice/server/EmbeddingExampleIT.java"));
        String example = source.substring(source.indexOf("// --- example start") + "// --- example start".length(),
                source.indexOf("// --- example end")).stripIndent().strip();
        String doc = Files.readString(Path.of("../docs/embedding.md"));
        assertThat(normalize(doc)).as("docs/embedding.md shows the tested example").contains(normalize(example));
    }

    @Test
    void twoEmbeddedGatewaysRunInOneJvmWithoutAnAdminListener() throws Exception {
        try (TestBackend a = TestBackend.start()) {
            GatewayConfig config = GatewayConfig.builder()
                    .listeners(ListenerConfig.builder().name("web").routes(RouteConfig.to("c")).build())
                    .clusters(ClusterConfig.builder().name("c").hosts(new HostConfig("127.0.0.1", a.port(), 1)).build())
                    .build();
            try (Gateway one = Gateway.builder().config(config).build().start().get(30, TimeUnit.SECONDS);
                 Gateway two = Gateway.builder().config(config).build().start().get(30, TimeUnit.SECONDS)) {
                assertThat(one.adminAddress()).isNull();
                assertThat(two.adminAddress()).isNull();
                assertThat(one.port("web")).isNotEqualTo(two.port("web"));
            }
        }
    }

    private static String normalize(String s) {
        return s.lines().map(String::strip).filter(l -> !l.isEmpty()).reduce("", (x, y) -> x + y + "\n");
    }
}
