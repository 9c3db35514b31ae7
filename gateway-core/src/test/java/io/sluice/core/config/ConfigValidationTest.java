package io.sluice.core.config;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class ConfigValidationTest {

    private static ClusterConfig cluster(String name) {
        return ClusterConfig.of(name, List.of(new HostConfig("127.0.0.1", 8080, 1)));
    }

    @Test
    void routeToUnknownClusterNamesThePathAndTheKnownClusters() {
        ListenerConfig l = ListenerConfig.http("web", "127.0.0.1", 2046, List.of(RouteConfig.to("nope")));
        assertThatThrownBy(() -> new GatewayConfig(List.of(l), List.of(cluster("demo")), null, null, null))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("$.listeners[0].routes[0].cluster")
                .hasMessageContaining("\"nope\"")
                .hasMessageContaining("demo");
    }

    @Test
    void duplicateClusterNamesAndListenerPortsAreRejected() {
        ListenerConfig a = ListenerConfig.http("a", "127.0.0.1", 2046, List.of(RouteConfig.to("demo")));
        ListenerConfig b = ListenerConfig.http("b", "127.0.0.1", 2046, List.of(RouteConfig.to("demo")));
        assertThatThrownBy(() -> new GatewayConfig(List.of(a), List.of(cluster("demo"), cluster("demo")), null, null, null))
                .hasMessageContaining("$.clusters[1].name");
        assertThatThrownBy(() -> new GatewayConfig(List.of(a, b), List.of(cluster("demo")), null, null, null))
                .hasMessageContaining("$.listeners[1].port");
    }

    @Test
    void slowStartRejectsAZeroFloorAndNonPositiveAggression() {
        assertThatThrownBy(() -> new SlowStartConfig(Duration.ofSeconds(30), 1.0, 0.0))
                .isInstanceOf(ConfigException.class).hasMessageContaining("min_weight_percent");
        assertThatThrownBy(() -> new SlowStartConfig(Duration.ofSeconds(30), 0.0, 0.1))
                .isInstanceOf(ConfigException.class).hasMessageContaining("aggression");
        assertThat(SlowStartConfig.of(Duration.ofSeconds(30)).enabled()).isTrue();
        assertThat(SlowStartConfig.of(Duration.ZERO).enabled()).isFalse();
    }

    @Test
    void errorsCanBePlacedUnderTheirJsonPath() {
        ConfigException e = new ConfigException("weight", -1, "an integer in [0, 10000]");
        assertThat(e.under("$.clusters[0].hosts[2]").path()).isEqualTo("$.clusters[0].hosts[2].weight");
        assertThat(e.under("$.clusters[0].hosts[2]").getMessage())
                .isEqualTo("$.clusters[0].hosts[2].weight: bad value -1; expected an integer in [0, 10000]");
    }

    @Test
    void hostAddressesParseAndDuplicatesAreRejected() {
        assertThat(HostConfig.parse("127.0.0.1:8080", 2)).isEqualTo(new HostConfig("127.0.0.1", 8080, 2));
        assertThat(HostConfig.parse("[::1]:80", 1).address()).isEqualTo("[::1]:80");
        assertThatThrownBy(() -> HostConfig.parse("localhost", 1)).hasMessageContaining("host:port");
        assertThatThrownBy(() -> ClusterConfig.of("c", List.of(HostConfig.parse("a:1", 1), HostConfig.parse("a:1", 2))))
                .hasMessageContaining("hosts[1].address");
    }

    @Test
    void prefixRewriteNeedsAPrefixMatch() {
        assertThatThrownBy(() -> new RouteConfig(null, RouteMatch.ANY, "c", "/v2", null))
                .hasMessageContaining("prefix_rewrite");
    }
}
