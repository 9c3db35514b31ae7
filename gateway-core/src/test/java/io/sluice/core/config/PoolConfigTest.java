package io.sluice.core.config;

import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class PoolConfigTest {

    @Test
    void byDefaultIdleConnectionsAreNotCappedButExpireByTime() {
        PoolConfig d = PoolConfig.defaults();
        assertThat(d.maxIdlePerHost()).isEqualTo(PoolConfig.NO_CAP);
        assertThat(d.idleTimeout()).isEqualTo(Duration.ofSeconds(4));
    }

    @Test
    void aCapIsOptional() {
        assertThat(new PoolConfig(-1, Duration.ofSeconds(4), 1).maxIdlePerHost()).isEqualTo(PoolConfig.NO_CAP);
        assertThat(new PoolConfig(0, Duration.ofSeconds(4), 1).maxIdlePerHost()).isZero(); // no reuse
        assertThat(new PoolConfig(64, Duration.ofSeconds(4), 1).maxIdlePerHost()).isEqualTo(64);
        assertThatThrownBy(() -> new PoolConfig(-2, Duration.ofSeconds(4), 1))
                .isInstanceOf(ConfigException.class).hasMessageContaining("max_idle_per_host");
    }
}
