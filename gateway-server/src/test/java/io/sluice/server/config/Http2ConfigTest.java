package io.sluice.server.config;

import io.sluice.core.config.ConfigException;
import io.sluice.core.config.Http2Options;
import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** {@code listeners[i].http.http2}: defaults, every key, and errors naming the JSON path. */
class Http2ConfigTest {

    private static final String WITH = """
            {"listeners": [{"name": "web", "port": 8080, "routes": [{"cluster": "api"}], "http": {"http2": %s}}],
             "clusters": [{"name": "api", "hosts": ["127.0.0.1:9000"]}]}""";

    private static Http2Options load(String http2) {
        return ConfigLoader.parse(WITH.formatted(http2), "t.json").config().listeners().get(0).http().http2();
    }

    private static String error(String http2) {
        try {
            ConfigLoader.parse(WITH.formatted(http2), "t.json");
        } catch (ConfigException e) {
            return e.getMessage();
        }
        throw new AssertionError("no error for " + http2);
    }

    @Test
    void defaults() {
        Http2Options d = load("{}");
        assertThat(d).isEqualTo(Http2Options.defaults());
        assertThat(d.enabled()).isTrue();
        assertThat(d.h2cUpgrade()).isFalse();
        assertThat(d.maxConcurrentStreams()).isEqualTo(100);
        assertThat(d.maxHeaderListSize()).isEqualTo(16_384);
        assertThat(d.maxRstFramesPerWindow()).isEqualTo(200);
        assertThat(d.rstWindow()).isEqualTo(Duration.ofSeconds(30));
    }

    @Test
    void everyKeyIsRead() {
        Http2Options o = load("""
                {"enabled": false, "h2c_upgrade": true, "max_concurrent_streams": 7, "initial_window_size": "128KiB",
                 "connection_window_size": "4MiB", "max_header_list_size": "8KiB", "max_frame_size": 32768,
                 "max_rst_frames_per_window": 50, "rst_window": "10s", "max_queued_control_frames": 1000,
                 "max_consecutive_empty_data_frames": 3, "max_small_continuation_frames": 8}""");
        assertThat(o).isEqualTo(new Http2Options(false, true, 7, 128 * 1024, 4 << 20, 8192, 32768, 50,
                Duration.ofSeconds(10), 1000, 3, 8));
        assertThat(o.toBuilder().build()).isEqualTo(o);
    }

    @Test
    void badValuesNameTheirPath() {
        assertThat(error("{\"max_concurrent_streams\": 0}"))
                .startsWith("$.listeners[0].http.http2.max_concurrent_streams:").contains("0");
        assertThat(error("{\"max_frame_size\": 1000}")).startsWith("$.listeners[0].http.http2.max_frame_size:");
        assertThat(error("{\"rst_window\": \"500ms\"}")).startsWith("$.listeners[0].http.http2.rst_window:");
        assertThat(error("{\"max_streams\": 5}")).contains("$.listeners[0].http.http2.max_streams");
        assertThat(error("{\"h2c_upgrade\": \"yes\"}")).startsWith("$.listeners[0].http.http2.h2c_upgrade:");
    }

    @Test
    void theRecordValidates() {
        assertThatThrownBy(() -> Http2Options.builder().initialWindowSize(10).build())
                .isInstanceOf(ConfigException.class).hasMessageContaining("initial_window_size");
    }
}
