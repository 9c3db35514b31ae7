package io.sluice.server.http2;

import io.sluice.core.config.ConfigException;
import io.sluice.core.config.UpstreamProtocol;
import io.sluice.server.config.ConfigLoader;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The cluster's {@code upstream_protocol} in the native JSON format: values, default, errors naming the path. */
class UpstreamProtocolConfigTest {

    static String config(String cluster) {
        return """
                {"clusters": [{"name": "c", "hosts": [{"address": "127.0.0.1:9"}]%s}],
                 "listeners": [{"name": "web", "port": 0, "routes": [{"cluster": "c"}]}]}""".formatted(cluster);
    }

    @Test
    void h2cIsReadAndHttp1IsTheDefault() {
        assertThat(ConfigLoader.parse(config(", \"upstream_protocol\": \"h2c\""), "t").config().clusters().get(0)
                .upstreamProtocol()).isEqualTo(UpstreamProtocol.H2C);
        assertThat(ConfigLoader.parse(config(""), "t").config().clusters().get(0).upstreamProtocol())
                .isEqualTo(UpstreamProtocol.HTTP1);
        // the rendered config (admin /config, reload) says it and reads back the same
        io.sluice.core.config.GatewayConfig c = ConfigLoader.parse(config(", \"upstream_protocol\": \"h2c\""), "t").config();
        String json = io.sluice.server.config.ConfigJson.render(c);
        assertThat(json).containsPattern("\"upstream_protocol\"\\s*:\\s*\"h2c\"");
        assertThat(ConfigLoader.parse(json, "t").config().clusters().get(0).upstreamProtocol()).isEqualTo(UpstreamProtocol.H2C);
    }

    @Test
    void unknownValuesAndBoltClustersAreErrorsNamingThePath() {
        assertThatThrownBy(() -> ConfigLoader.parse(config(", \"upstream_protocol\": \"h3\""), "t"))
                .isInstanceOf(ConfigException.class).hasMessageContaining("$.clusters[0].upstream_protocol")
                .hasMessageContaining("h3");
        assertThatThrownBy(() -> ConfigLoader.parse(config(", \"protocol\": \"bolt\", \"upstream_protocol\": \"h2c\""), "t"))
                .isInstanceOf(ConfigException.class).hasMessageContaining("upstream_protocol");
    }

    @Test
    void h2NeedsATlsBlockAndH2cMustNotHaveOne() {
        assertThatThrownBy(() -> ConfigLoader.parse(config(", \"upstream_protocol\": \"h2\""), "t"))
                .isInstanceOf(ConfigException.class).hasMessageContaining("$.clusters[0].upstream_protocol")
                .hasMessageContaining("h2").hasMessageContaining("tls block");
        assertThatThrownBy(() -> ConfigLoader.parse(config(", \"upstream_protocol\": \"h2c\", \"tls\": {\"verify\": false}"), "t"))
                .isInstanceOf(ConfigException.class).hasMessageContaining("$.clusters[0].upstream_protocol")
                .hasMessageContaining("h2c");
        io.sluice.core.config.ClusterConfig c = ConfigLoader.parse(config(
                ", \"upstream_protocol\": \"h2\", \"tls\": {\"verify\": false}"), "t").config().clusters().get(0);
        assertThat(c.upstreamProtocol()).isEqualTo(UpstreamProtocol.H2);
        assertThat(c.tls()).isNotNull();
    }

    @Test
    void theHttp2BlockSetsPingKeepAliveAndRendersBack() {
        io.sluice.core.config.GatewayConfig g = ConfigLoader.parse(config(
                ", \"upstream_protocol\": \"h2c\", \"http2\": {\"ping_interval\": \"5m\", \"ping_timeout\": \"10s\"}"), "t").config();
        io.sluice.core.config.UpstreamHttp2Config h = g.clusters().get(0).http2();
        assertThat(h.pingInterval()).isEqualTo(java.time.Duration.ofMinutes(5));
        assertThat(h.pingTimeout()).isEqualTo(java.time.Duration.ofSeconds(10));
        assertThat(ConfigLoader.parse(io.sluice.server.config.ConfigJson.render(g), "t").config().clusters().get(0).http2())
                .isEqualTo(h);
        assertThat(ConfigLoader.parse(config(""), "t").config().clusters().get(0).http2().pings()).isFalse();
        assertThatThrownBy(() -> ConfigLoader.parse(config(", \"http2\": {\"ping_timeout\": \"0s\"}"), "t"))
                .isInstanceOf(ConfigException.class).hasMessageContaining("$.clusters[0].http2.ping_timeout");
        assertThatThrownBy(() -> ConfigLoader.parse(config(", \"http2\": {\"ping_every\": \"1s\"}"), "t"))
                .isInstanceOf(ConfigException.class).hasMessageContaining("$.clusters[0].http2.ping_every");
    }
}
