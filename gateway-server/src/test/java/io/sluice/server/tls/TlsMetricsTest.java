package io.sluice.server.tls;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** Handshake and negotiation counters: the pre-registered success counter and the tag maps. */
class TlsMetricsTest {

    static double count(SimpleMeterRegistry r, String name, String... tags) {
        Counter c = r.find(name).tags(tags).counter();
        return c == null ? -1 : c.count();
    }

    @Test
    void successesFailuresAndNegotiatedSuitesAreCountedByTag() {
        SimpleMeterRegistry r = new SimpleMeterRegistry();
        try (TlsMetrics m = new TlsMetrics(r, "web")) {
            assertThat(count(r, "sluice.tls.handshakes", "listener", "web", "result", "success", "reason", "ok")).isZero();
            m.handshake(true, "ok");
            m.handshake(true, "ok");
            m.handshake(false, "timeout");
            m.negotiated("TLSv1.3", "TLS_AES_128_GCM_SHA256");
            m.negotiated(new String("TLSv1.3"), new String("TLS_AES_128_GCM_SHA256"));
            m.negotiated("TLSv1.2", "TLS_AES_128_GCM_SHA256");
            assertThat(count(r, "sluice.tls.handshakes", "listener", "web", "result", "success", "reason", "ok")).isEqualTo(2);
            assertThat(m.handshakes(true, "ok")).isEqualTo(2);
            assertThat(count(r, "sluice.tls.handshakes", "listener", "web", "result", "failure", "reason", "timeout")).isEqualTo(1);
            assertThat(m.handshakes(false, "timeout")).isEqualTo(1);
            assertThat(count(r, "sluice.tls.negotiated", "listener", "web", "protocol", "TLSv1.3", "cipher", "TLS_AES_128_GCM_SHA256"))
                    .isEqualTo(2);
            assertThat(count(r, "sluice.tls.negotiated", "listener", "web", "protocol", "TLSv1.2", "cipher", "TLS_AES_128_GCM_SHA256"))
                    .isEqualTo(1);
        }
        assertThat(r.find("sluice.tls.handshakes").counters()).isEmpty();
        assertThat(r.find("sluice.tls.negotiated").counters()).isEmpty();
    }
}
