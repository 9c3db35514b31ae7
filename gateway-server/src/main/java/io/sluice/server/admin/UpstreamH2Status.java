package io.sluice.server.admin;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;

/**
 * http2: the {@code h2} object of a cluster in {@code /clusters} (clusters with HTTP/2 upstream
 * connections only): open connections, active streams, GOAWAYs received, refused and moved streams,
 * PING timeouts, read from the {@code sluice_upstream_h2_*} meters.
 */
final class UpstreamH2Status {

    private UpstreamH2Status() {
    }

    static void json(ObjectNode cluster, MeterRegistry registry, String name) {
        if (registry == null) {
            return;
        }
        Gauge conns = registry.find("sluice.upstream.h2.connections").tag("cluster", name).gauge();
        if (conns == null) {
            return; // no HTTP/2 connection was made to this cluster
        }
        ObjectNode h2 = cluster.putObject("h2");
        h2.put("connections", (long) conns.value());
        Gauge streams = registry.find("sluice.upstream.h2.streams.active").tag("cluster", name).gauge();
        h2.put("streams_active", streams == null ? 0 : (long) streams.value());
        h2.put("goaway_received", count(registry, "sluice.upstream.h2.goaway.received", name));
        h2.put("streams_refused", count(registry, "sluice.upstream.h2.streams.refused", name));
        h2.put("streams_moved", count(registry, "sluice.upstream.h2.streams.moved", name));
        h2.put("ping_timeouts", count(registry, "sluice.upstream.h2.ping.timeouts", name));
    }

    private static long count(MeterRegistry registry, String meter, String name) {
        Counter c = registry.find(meter).tag("cluster", name).counter();
        return c == null ? 0 : (long) c.count();
    }
}
