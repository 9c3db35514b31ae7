package io.sluice.server.discovery;

import io.sluice.core.config.AdminConfig;
import io.sluice.core.config.ClusterConfig;
import io.sluice.core.config.DiscoveryConfig;
import io.sluice.core.config.GatewayConfig;
import io.sluice.core.config.ListenerConfig;
import io.sluice.core.config.RouteConfig;
import io.sluice.core.discovery.DiscoveredHost;
import io.sluice.server.Gateway;
import io.sluice.server.testing.TestBackend;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * {@code GET /ready} of a started gateway with a discovery cluster: 503 naming the cluster until its
 * source's first host list is applied, then 200; with a short {@code initial_fetch_timeout} and a
 * silent source, 200 with a note. (The exact timeout is proven on a fake clock in DiscoveryReadinessTest.)
 */
@Timeout(30)
class DiscoveryReadyIT {

    private final HttpClient http = HttpClient.newHttpClient();

    private HttpResponse<String> ready(Gateway gw) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + gw.adminAddress().getPort() + "/ready"))
                .timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.ofString());
    }

    private static Gateway start(DiscoveryReadinessTest.Manual source, Duration timeout) {
        GatewayConfig config = GatewayConfig.builder()
                .listeners(ListenerConfig.builder().name("web").port(0).routes(RouteConfig.to("api")).build())
                .clusters(ClusterConfig.builder().name("api")
                        .discovery(DiscoveryConfig.custom("reg").withInitialFetchTimeout(timeout)).build())
                .admin(new AdminConfig(true, "127.0.0.1", 0, true))
                .build();
        return Gateway.builder().config(config).hostSource("reg", () -> source)
                .build().start().orTimeout(30, TimeUnit.SECONDS).join();
    }

    @Test
    void readyWaitsForTheFirstHostList() throws Exception {
        DiscoveryReadinessTest.Manual source = new DiscoveryReadinessTest.Manual();
        try (TestBackend backend = TestBackend.start(); Gateway gw = start(source, Duration.ofMinutes(5))) {
            HttpResponse<String> r = ready(gw);
            assertThat(r.statusCode()).isEqualTo(503);
            assertThat(r.body()).contains("waiting for the first host list of api");
            source.sink.hosts(List.of(new DiscoveredHost("127.0.0.1", backend.port(), 100, 0, "reg")));
            r = ready(gw);
            assertThat(r.statusCode()).isEqualTo(200);
            assertThat(r.body()).isEqualTo("ready\n");
            // the source going quiet or away later does not make the gateway unready
            source.sink.state("lost", false);
            assertThat(ready(gw).statusCode()).isEqualTo(200);
        }
    }

    @Test
    void aSilentSourceIsReadyAfterInitialFetchTimeoutAndSaysSo() throws Exception {
        DiscoveryReadinessTest.Manual source = new DiscoveryReadinessTest.Manual();
        try (Gateway gw = start(source, Duration.ofMillis(300))) {
            await().atMost(Duration.ofSeconds(5)).pollInterval(Duration.ofMillis(50))
                    .until(() -> ready(gw).statusCode() == 200);
            assertThat(ready(gw).body()).startsWith("ready; no host list yet from the source of cluster(s) [api]");
            source.sink.hosts(List.of());
            assertThat(ready(gw).body()).isEqualTo("ready\n");
        }
    }
}
