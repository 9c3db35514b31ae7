package io.sluice.server.discovery;

import io.sluice.core.config.ClusterConfig;
import io.sluice.core.config.ConfigException;
import io.sluice.core.config.DiscoveryConfig;
import io.sluice.core.config.GatewayConfig;
import io.sluice.core.config.ListenerConfig;
import io.sluice.core.config.RouteConfig;
import io.sluice.core.discovery.DiscoveredHost;
import io.sluice.core.discovery.HostSource;
import io.sluice.server.Gateway;
import io.sluice.server.testing.TestBackend;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * The {@link HostSource} SPI as an embedder uses it (docs/embedding.md shows the marked example):
 * real HTTP backends, the JDK HttpClient through the gateway, hosts fed from the test's own "registry".
 */
@Timeout(60)
class HostSourceIT {

    private final HttpClient http = HttpClient.newHttpClient();

    // --- source start
    /** An embedder's registry: publishes the whole host list whenever it changes. */
    static final class MyRegistry implements HostSource {
        private volatile Sink sink;

        @Override
        public void start(Sink sink) {
            this.sink = sink;
        }

        /** Called by the embedder's own code whenever its view of the service changes. */
        void publish(List<DiscoveredHost> hosts) {
            sink.hosts(hosts);
        }

        @Override
        public void close() {
            sink = null;
        }
    }
    // --- source end

    private int get(Gateway gw, String path) throws Exception {
        HttpResponse<Void> r = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + gw.port("web") + path))
                .timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.discarding());
        return r.statusCode();
    }

    @Test
    void anEmbeddersSourceFeedsTheClusterAndTheDocShowsIt() throws Exception {
        try (TestBackend a = TestBackend.start(); TestBackend b = TestBackend.start()) {
            MyRegistry myRegistry = new MyRegistry();
            // --- example start
            GatewayConfig config = GatewayConfig.builder()
                    .listeners(ListenerConfig.builder().name("web").port(0).routes(RouteConfig.to("api")).build())
                    .clusters(ClusterConfig.builder().name("api").discovery(DiscoveryConfig.custom("my-registry")).build())
                    .build();
            Gateway gateway = Gateway.builder().config(config)
                    .hostSource("my-registry", () -> myRegistry)         // called once per cluster that names it
                    .build().start().orTimeout(30, TimeUnit.SECONDS).join();
            myRegistry.publish(List.of(
                    new DiscoveredHost("127.0.0.1", a.port(), 100, 0, "my-registry"),
                    new DiscoveredHost("127.0.0.1", b.port(), 300, 0, "my-registry")));
            // --- example end
            try (gateway) {
                int before = a.requests() + b.requests();
                for (int i = 0; i < 400; i++) {
                    assertThat(get(gateway, "/x")).isEqualTo(200);
                }
                assertThat(a.requests() + b.requests() - before).isEqualTo(400);
                assertThat(b.requests() - a.requests()).isBetween(195, 205); // 100:300 -> a 100, b 300
                assertThat(gateway.cluster("api").hosts()).allSatisfy(h -> assertThat(h.origin()).isEqualTo("my-registry"));

                // an empty list (allow_empty false): the last hosts keep serving
                myRegistry.publish(List.of());
                assertThat(get(gateway, "/x")).isEqualTo(200);
                assertThat(gateway.cluster("api").hosts()).hasSize(2);

                // a reload that changes the cluster keeps the discovered hosts
                GatewayConfig next = config.toBuilder().clusters(config.clusters().get(0).toBuilder().panicThreshold(0).build())
                        .build();
                gateway.reload(next);
                assertThat(gateway.cluster("api").hosts()).hasSize(2);
                assertThat(get(gateway, "/x")).isEqualTo(200);

                // one host left
                myRegistry.publish(List.of(new DiscoveredHost("127.0.0.1", b.port(), 100, 0, "my-registry")));
                int aBefore = a.requests();
                for (int i = 0; i < 10; i++) {
                    assertThat(get(gateway, "/x")).isEqualTo(200);
                }
                assertThat(a.requests()).isEqualTo(aBefore);
            }
        }
        String source = Files.readString(Path.of("src/test/java/io/sluice/server/discovery/HostSourceIT.java"));
        String doc = Files.readString(Path.of("../docs/embedding.md"));
        for (String part : new String[] {"source", "example"}) {
            String code = source.substring(source.indexOf("// --- " + part + " start") + ("// --- " + part + " start").length(),
                    source.indexOf("// --- " + part + " end")).stripIndent().strip();
            assertThat(normalize(doc)).as("docs/embedding.md shows the tested " + part).contains(normalize(code));
        }
    }

    @Test
    void aClusterNamingAnUnknownSourceIsAConfigError() {
        GatewayConfig config = GatewayConfig.builder()
                .listeners(ListenerConfig.builder().name("web").port(0).routes(RouteConfig.to("api")).build())
                .clusters(ClusterConfig.builder().name("api").discovery(DiscoveryConfig.custom("nope")).build())
                .build();
        Throwable t = catchThrowable(() -> Gateway.builder().config(config).build().start().orTimeout(30, TimeUnit.SECONDS).join());
        assertThat(t).isInstanceOf(CompletionException.class).cause().isInstanceOf(ConfigException.class)
                .hasMessageContaining("clusters[api].discovery.source").hasMessageContaining("nope");
    }

    private static String normalize(String s) {
        return s.replaceAll("\\s+", " ");
    }
}
