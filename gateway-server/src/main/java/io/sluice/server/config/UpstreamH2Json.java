package io.sluice.server.config;

import io.sluice.core.config.UpstreamHttp2Config;

/** http2: a cluster's {@code http2} object (native format): options of its HTTP/2 upstream connections. */
final class UpstreamH2Json {

    private UpstreamH2Json() {
    }

    /** {@code $.clusters[i].http2}, or null when absent (defaults). */
    static UpstreamHttp2Config read(JsonObject o) {
        if (o == null) {
            return null;
        }
        var interval = o.duration("ping_interval", null);
        var timeout = o.duration("ping_timeout", null);
        o.finish();
        return ConfigLoader.build(o.path(), () -> new UpstreamHttp2Config(interval, timeout));
    }
}
