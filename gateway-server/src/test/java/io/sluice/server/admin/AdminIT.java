package io.sluice.server.admin;

import io.sluice.core.cluster.HealthStatus;
import io.sluice.core.config.AdminConfig;
import io.sluice.server.Gateway;
import io.sluice.server.testing.GatewayFixture;
import io.sluice.server.testing.TestBackend;
import org.junit.jupiter.api.Test;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** The admin API on its own port: metrics, readiness, cluster state. */
class AdminIT {

    private final HttpClient client = HttpClient.newHttpClient();

    private HttpResponse<String> admin(Gateway g, String path) throws Exception {
        URI uri = URI.create("http://127.0.0.1:" + g.adminAddress().getPort() + path);
        return client.send(HttpRequest.newBuilder(uri)
                .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void servesMetricsReadinessAndClusterState() throws Exception {
        try (TestBackend b = TestBackend.start();
             Gateway g = GatewayFixture.start(GatewayFixture.simple(b).withAdmin(new AdminConfig(true, "127.0.0.1", 0)))) {
            client.send(HttpRequest.newBuilder(GatewayFixture.uri(g, "/x"))
                    .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());

            HttpResponse<String> metrics = admin(g, "/metrics");
            assertThat(metrics.statusCode()).isEqualTo(200);
            assertThat(metrics.headers().firstValue("content-type")).hasValueSatisfying(v -> assertThat(v).startsWith("text/plain"));
            assertThat(metrics.body()).contains("sluice_requests_total{", "outcome=\"proxied\"", "listener=\"web\"",
                    "sluice_downstream_connections_active");

            assertThat(admin(g, "/ready").statusCode()).isEqualTo(200);

            g.cluster("c").hosts().get(0).health(HealthStatus.UNHEALTHY);
            HttpResponse<String> clusters = admin(g, "/clusters");
            assertThat(clusters.statusCode()).isEqualTo(200);
            assertThat(clusters.body()).contains("\"name\" : \"c\"", "\"address\" : \"127.0.0.1:" + b.port() + "\"",
                    "\"health\" : \"unhealthy\"", "\"available\" : false");

            assertThat(admin(g, "/nope").statusCode()).isEqualTo(404);
            assertThat(client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + g.adminAddress().getPort() + "/ready"))
                    .POST(HttpRequest.BodyPublishers.noBody())
                    .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString()).statusCode())
                    .isEqualTo(405);

            assertThat(admin(g, "/healthz").body()).isEqualTo("ok\n");
            assertThat(admin(g, "/config").body()).contains("\"name\" : \"web\"");
            // configured in code: nothing to reload from
            HttpResponse<String> reload = client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:"
                    + g.adminAddress().getPort() + "/reload")).POST(HttpRequest.BodyPublishers.noBody())
                            .timeout(Duration.ofSeconds(10)).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(reload.statusCode()).isEqualTo(409);
            assertThat(reload.body()).contains("Gateway.reload");
        }
    }

    @Test
    void statusPageShowsListenersClustersHostsAndLastReload() throws Exception {
        try (TestBackend b = TestBackend.start();
             Gateway g = GatewayFixture.start(GatewayFixture.simple(b).withAdmin(new AdminConfig(true, "127.0.0.1", 0)))) {
            HttpResponse<String> page = admin(g, "/");
            assertThat(page.statusCode()).isEqualTo(200);
            assertThat(page.headers().firstValue("content-type")).hasValue("text/html; charset=utf-8");
            assertThat(page.body()).startsWith("<!DOCTYPE html>").contains("<title>sluice status</title>",
                    "web", "127.0.0.1:" + g.port("web"), ">c<", "127.0.0.1:" + b.port(),
                    ">" + g.cluster("c").hosts().get(0).health().name().toLowerCase() + "<", "last reload: none since start",
                    "config version 1", "<a href=\"/metrics\">", "<a href=\"/clusters\">", "<a href=\"/config\">", "version <code>");
            assertThat(page.body()).doesNotContain("<script", "http://", "https://");

            g.cluster("c").hosts().get(0).health(HealthStatus.UNHEALTHY);
            g.reload(g.config().withClusters(List.of(g.config().clusters().get(0).withHosts(List.of(
                    GatewayFixture.host(b, 3))))));
            String after = admin(g, "/").body();
            assertThat(after).contains("applied: config version 2", "config version 2", ">unhealthy<");
            assertThat(after).containsPattern("<td class=\"n\">3</td>");
        }
    }

    @Test
    void disabledAdminBindsNothing() throws Exception {
        try (TestBackend b = TestBackend.start(); Gateway g = GatewayFixture.start(GatewayFixture.simple(b))) {
            assertThat(g.adminAddress()).isNull();
        }
    }
}
