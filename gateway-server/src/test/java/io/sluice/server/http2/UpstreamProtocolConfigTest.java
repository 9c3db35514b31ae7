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
}
