package io.sluice.server.http2;

import io.sluice.core.config.HostConfig;
import io.sluice.core.config.HttpOptions;
import io.sluice.server.Gateway;
import io.sluice.server.testing.GatewayFixture;
import io.sluice.server.testing.TestBackend;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/** Draining an HTTP/2 connection: GOAWAY NO_ERROR at once, the stream in flight still finishes, then the close. */
class H2DrainIT {

    @Test
    void drainSendsGoAwayAndLetsTheStreamInFlightFinish() throws Exception {
        try (TestBackend backend = TestBackend.start()) {
            Gateway gw = GatewayFixture.start(GatewayFixture.simple(List.of(new HostConfig("127.0.0.1", backend.port(), 1)),
                    HttpOptions.defaults()));
            CompletableFuture<Void> down = null;
            try (RawH2 c = new RawH2(gw.port("web"))) {
                c.frame(RawH2.HEADERS, RawH2.END_HEADERS, 1, RawH2.block(":method", "POST", ":scheme", "http",
                        ":authority", "localhost", ":path", "/echo"));
                c.flush();
                assertThat(c.await(RawH2.HEADERS, 1)).isNotNull(); // /echo answers its head at once
                assertThat(c.decoded.status().toString()).isEqualTo("200");
                long t0 = System.nanoTime();
                down = gw.shutdown();
                RawH2.Frame goAway = c.await(RawH2.GOAWAY, 0);
                assertThat(goAway).isNotNull();
                // at once, not when the drain timeout (5 s) forces the close
                assertThat((System.nanoTime() - t0) / 1_000_000).isLessThan(3_000);
                assertThat(goAway.errorCode()).isZero(); // NO_ERROR
                c.frame(RawH2.DATA, RawH2.END_STREAM, 1, "still here".getBytes(StandardCharsets.US_ASCII));
                c.flush();
                ByteArrayOutputStream body = new ByteArrayOutputStream();
                RawH2.Frame f;
                boolean ended = false;
                while (!ended && (f = c.read()) != null) {
                    if (f.type() == RawH2.DATA && f.stream() == 1) {
                        body.writeBytes(f.payload());
                        ended = (f.flags() & RawH2.END_STREAM) != 0;
                    }
                }
                assertThat(ended).isTrue();
                assertThat(body.toString(StandardCharsets.US_ASCII)).isEqualTo("still here");
                assertThat(c.closedByPeer()).isTrue();
            } finally {
                if (down == null) {
                    gw.close();
                } else {
                    down.get(15, TimeUnit.SECONDS);
                }
            }
        }
    }
}
