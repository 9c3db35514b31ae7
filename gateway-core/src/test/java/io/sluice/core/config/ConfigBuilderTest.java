package io.sluice.core.config;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class ConfigBuilderTest {

    @Test
    void buildersStartFromTheDefaults() {
        assertThat(HttpOptions.builder().build()).isEqualTo(HttpOptions.defaults());
        assertThat(PoolConfig.builder().build()).isEqualTo(PoolConfig.defaults());
        assertThat(BoltOptions.builder().build()).isEqualTo(BoltOptions.defaults());
        assertThat(TransportConfig.builder().build()).isEqualTo(TransportConfig.defaults());
        assertThat(OutlierConfig.builder().build()).isEqualTo(OutlierConfig.defaults());
        assertThat(HealthCheckConfig.builder().build()).isEqualTo(HealthCheckConfig.of(HealthCheckConfig.TCP));
        ClusterConfig c = ClusterConfig.builder().name("c").hosts(new HostConfig("127.0.0.1", 80, 1)).build();
        assertThat(c.protocol()).isEqualTo(Protocol.HTTP);
        assertThat(c.lb()).isEqualTo(LbPolicy.WEIGHTED_ROUND_ROBIN);
        assertThat(c.connectTimeout()).isEqualTo(ClusterConfig.DEFAULT_CONNECT_TIMEOUT);
        assertThat(c.responseTimeout()).isEqualTo(ClusterConfig.DEFAULT_RESPONSE_TIMEOUT);
        assertThat(c.pool()).isEqualTo(PoolConfig.defaults());
        assertThat(c.panicThreshold()).isEqualTo(ClusterConfig.DEFAULT_PANIC_THRESHOLD);
        assertThat(c.leastRequestChoices()).isEqualTo(2);
        assertThat(c.activeRequestBias()).isEqualTo(1.0);
        assertThat(c.healthCheck()).isNull();
        assertThat(c.slowStart()).isNull();
        assertThat(c.outlier()).isNull();
        assertThat(c.warmUpAtBoot()).isFalse();
        ListenerConfig l = ListenerConfig.builder().name("web").routes(RouteConfig.to("c")).build();
        assertThat(l).isEqualTo(ListenerConfig.http("web", "127.0.0.1", 0, List.of(RouteConfig.to("c"))));
        GatewayConfig g = GatewayConfig.builder().listeners(l).clusters(c).build();
        assertThat(g).isEqualTo(new GatewayConfig(List.of(l), List.of(c), null, null, null, null, null));
        assertThat(g.drainTimeout()).isEqualTo(GatewayConfig.DEFAULT_DRAIN_TIMEOUT);
    }

    @Test
    void toBuilderCopiesEveryComponent() {
        ClusterConfig c = ClusterConfig.builder().name("c").protocol(Protocol.BOLT).lb(LbPolicy.LEAST_REQUEST)
                .hosts(new HostConfig("127.0.0.1", 80, 3)).connectTimeout(Duration.ofMillis(250))
                .responseTimeout(Duration.ofSeconds(2)).pool(PoolConfig.builder().boltConnectionsPerHost(2).build())
                .healthCheck(HealthCheckConfig.of(HealthCheckConfig.BOLT)).slowStart(SlowStartConfig.of(Duration.ofSeconds(9)))
                .outlier(OutlierConfig.defaults()).panicThreshold(0).warmUpAtBoot(true).leastRequestChoices(3)
                .activeRequestBias(0.5).build();
        assertThat(c.toBuilder().build()).isEqualTo(c);
        assertThat(c.toBuilder().panicThreshold(7).build().panicThreshold()).isEqualTo(7);
        HttpOptions h = HttpOptions.builder().maxInitialLineLength(1024).maxHeaderSize(4096).maxRequestBodyBytes(5)
                .idleTimeout(Duration.ofSeconds(1)).requestHeaderTimeout(Duration.ofSeconds(2)).preserveHost(false)
                .xForwarded(false).build();
        assertThat(h.toBuilder().build()).isEqualTo(h);
        ListenerConfig l = ListenerConfig.builder().name("l").protocol(Protocol.AUTO).address("0.0.0.0").port(81).http(h)
                .bolt(BoltOptions.builder().defaultCluster("c").maxInFlight(3).build()).build();
        assertThat(l.toBuilder().build()).isEqualTo(l);
        GatewayConfig g = GatewayConfig.builder().listeners(ListenerConfig.builder().name("x").build())
                .admin(AdminConfig.disabled()).transport(TransportConfig.builder().workerThreads(2).build())
                .drainTimeout(Duration.ofSeconds(1)).accessLog(AccessLogConfig.disabled()).watchConfig(WatchConfig.disabled())
                .build();
        assertThat(g.toBuilder().build()).isEqualTo(g);
    }

    @Test
    void buildValidatesInTheRecordConstructor() {
        assertThatThrownBy(() -> HttpOptions.builder().maxHeaderSize(10).build())
                .isInstanceOf(ConfigException.class).hasMessageContaining("max_header_size");
        assertThatThrownBy(() -> ClusterConfig.builder().build())
                .isInstanceOf(ConfigException.class).hasMessageContaining("name");
        assertThatThrownBy(() -> GatewayConfig.builder().build())
                .isInstanceOf(ConfigException.class).hasMessageContaining("$.listeners");
    }
}
