package io.sluice.server.config;

import io.sluice.core.config.ConfigException;
import io.sluice.server.warmup.WarmUpConfig;
import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The native config's top-level {@code warm_up} section. */
class WarmUpConfigTest {

    private static String withWarmUp(String section) {
        return """
                {"listeners": [{"name": "web", "port": 8080, "routes": [{"cluster": "api"}]}],
                 "clusters": [{"name": "api", "hosts": ["127.0.0.1:9000"]}]%s}""".formatted(section);
    }

    @Test
    void absentMeansTheStandaloneDefaultOnForThreeSeconds() {
        LoadedConfig c = ConfigLoader.parse(withWarmUp(""), "t.json");
        assertThat(c.warmUp()).isEqualTo(new WarmUpConfig(true, Duration.ofSeconds(3)));
        assertThat(WarmUpConfig.standaloneDefault()).isEqualTo(c.warmUp());
    }

    @Test
    void readsEnabledAndDuration() {
        assertThat(ConfigLoader.parse(withWarmUp(", \"warm_up\": {\"enabled\": false}"), "t.json").warmUp().enabled()).isFalse();
        assertThat(ConfigLoader.parse(withWarmUp(", \"warm_up\": {\"duration\": \"1500ms\"}"), "t.json").warmUp())
                .isEqualTo(new WarmUpConfig(true, Duration.ofMillis(1500)));
    }

    @Test
    void errorsNameTheJsonPath() {
        assertThatThrownBy(() -> ConfigLoader.parse(withWarmUp(", \"warm_up\": {\"duration\": \"90s\"}"), "t.json"))
                .isInstanceOf(ConfigException.class).hasMessageContaining("$.warm_up.duration").hasMessageContaining("60s");
        assertThatThrownBy(() -> ConfigLoader.parse(withWarmUp(", \"warm_up\": {\"duration\": \"10ms\"}"), "t.json"))
                .isInstanceOf(ConfigException.class).hasMessageContaining("$.warm_up.duration");
        assertThatThrownBy(() -> ConfigLoader.parse(withWarmUp(", \"warm_up\": {\"enable\": true}"), "t.json"))
                .isInstanceOf(ConfigException.class).hasMessageContaining("$.warm_up.enable");
        assertThatThrownBy(() -> ConfigLoader.parse(withWarmUp(", \"warm_up\": {\"enabled\": \"yes\"}"), "t.json"))
                .isInstanceOf(ConfigException.class).hasMessageContaining("$.warm_up.enabled");
        assertThatThrownBy(() -> ConfigLoader.parse(withWarmUp(", \"warm_up\": true"), "t.json"))
                .isInstanceOf(ConfigException.class).hasMessageContaining("$.warm_up");
    }

    @Test
    void theRestOfTheFileIsStillCheckedForUnknownKeys() {
        assertThatThrownBy(() -> ConfigLoader.parse(withWarmUp(", \"warm_upp\": {}"), "t.json"))
                .isInstanceOf(ConfigException.class).hasMessageContaining("warm_upp");
    }
}
