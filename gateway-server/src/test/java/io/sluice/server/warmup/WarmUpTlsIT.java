package io.sluice.server.warmup;

import io.sluice.core.config.CertificateConfig;
import io.sluice.core.config.GatewayConfig;
import io.sluice.core.config.HostConfig;
import io.sluice.core.config.TlsConfig;
import io.sluice.core.config.TransportConfig;
import io.sluice.core.time.Ticker;
import io.sluice.server.tls.TestPki;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * With a TLS listener in the config, the warm-up also makes full TLS handshakes and HTTP requests over
 * TLS through a private listener with that listener's TLS settings (counted by the listener's own
 * handshake meter); without one, it makes none. Buffers are checked for leaks (PARANOID).
 */
class WarmUpTlsIT {

    @TempDir
    Path dir;

    private static final List<HostConfig> UNUSED = List.of(new HostConfig("127.0.0.1", 1, 1));

    /** Two rounds on the ticker. */
    private static WarmUp.Result twoRounds(GatewayConfig real) {
        AtomicLong now = new AtomicLong();
        Ticker ticker = now::get;
        return WarmUp.run(real, new WarmUpConfig(true, Duration.ofSeconds(3)), ticker, round -> {
            if (round == 2) {
                now.addAndGet(Duration.ofSeconds(3).toNanos());
            }
        });
    }

    @Test
    void aTlsListenerMakesTheWarmUpRunHandshakesAndRequestsOverTls() {
        TestPki pki = TestPki.ca(dir, "warm");
        TestPki.Leaf leaf = pki.leaf("gw", "gw.test", 5, "DNS:gw.test");
        TlsConfig tls = TlsConfig.builder().certificates(CertificateConfig.pem(leaf.chain().toString(), leaf.key().toString()))
                .clientAuth(TlsConfig.ClientAuth.REQUIRE, pki.caCert().toString()) // the synthetic clients have no certificate
                .build();
        // the "real" config: its TLS listener's settings are what the private TLS listener runs
        GatewayConfig real = WarmUp.syntheticConfig(UNUSED, UNUSED, TransportConfig.defaults(), tls);

        WarmUp.Result r = twoRounds(real);

        assertThat(r.failure()).isNull();
        assertThat(r.rounds()).isEqualTo(2);
        assertThat(r.tlsHandshakes()).as("successful handshakes counted by the private TLS listener")
                .isEqualTo(2L * WarmUp.TLS_CONNECTIONS);
        assertThat(r.tlsRequests()).isEqualTo(2L * WarmUp.TLS_CONNECTIONS * WarmUp.TLS_REQUESTS_PER_CONNECTION);
        assertThat(r.httpRequests()).isEqualTo(2L * (WarmUp.HTTP_CONNECTIONS * WarmUp.HTTP_REQUESTS_PER_CONNECTION
                + WarmUp.TLS_CONNECTIONS * WarmUp.TLS_REQUESTS_PER_CONNECTION));
        assertThat(r.toString()).contains(r.tlsHandshakes() + " TLS handshakes");
    }

    @Test
    void withoutATlsListenerTheWarmUpMakesNoHandshake() {
        WarmUp.Result r = twoRounds(WarmUp.syntheticConfig(UNUSED, UNUSED, TransportConfig.defaults()));

        assertThat(r.failure()).isNull();
        assertThat(r.rounds()).isEqualTo(2);
        assertThat(r.tlsHandshakes()).isZero();
        assertThat(r.tlsRequests()).isZero();
        assertThat(r.httpRequests()).isEqualTo(2L * WarmUp.HTTP_CONNECTIONS * WarmUp.HTTP_REQUESTS_PER_CONNECTION);
        assertThat(r.toString()).doesNotContain("TLS");
    }
}
