package io.sluice.server.http2;

import io.sluice.core.config.HostConfig;
import io.sluice.core.config.HttpOptions;
import io.sluice.server.Gateway;
import io.sluice.server.testing.GatewayFixture;
import org.junit.jupiter.api.Test;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Flow control is backpressure: an upstream that stops reading makes the gateway stop returning
 * window to the uploading HTTP/2 client, so what the gateway holds stays bounded.
 */
class H2BackpressureIT {

    @Test
    void aClientThatDoesNotReadStopsTheUpstream() throws Exception {
        try (io.sluice.server.testing.TestBackend backend = io.sluice.server.testing.TestBackend.start()) {
            Gateway gw = GatewayFixture.start(GatewayFixture.simple(List.of(new HostConfig("127.0.0.1", backend.port(), 1)),
                    HttpOptions.defaults()));
            try (RawH2 c = new RawH2(gw.port("web"), 4096)) {
                double before = direct(gw);
                // SETTINGS_INITIAL_WINDOW_SIZE = 0: the gateway may send this client no DATA
                c.frame(RawH2.SETTINGS, 0, 0, new byte[] {0, 4, 0, 0, 0, 0});
                c.headers(1, true, RawH2.get("/download?bytes=400000000"));
                assertThat(c.await(RawH2.HEADERS, 1)).isNotNull();
                Thread.sleep(2_000); // the upstream keeps sending if nothing stops it: 400 MB would pile up
                double grown = direct(gw) - before;
                assertThat(grown).as("direct memory the gateway took while the client read nothing").isLessThan(32 << 20);
            } finally {
                gw.close();
            }
        }
    }

    private static double direct(Gateway gw) {
        return gw.meterRegistry().get("sluice.netty.allocator.memory.used").tag("memory", "direct").gauge().value();
    }

    @Test
    void aStalledUpstreamStopsTheClientsWindow() throws Exception {
        List<Socket> held = new ArrayList<>();
        try (ServerSocket upstream = new ServerSocket()) {
            upstream.setReceiveBufferSize(4096);
            upstream.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
            Thread acceptor = new Thread(() -> {
                try {
                    while (true) {
                        held.add(upstream.accept()); // never reads
                    }
                } catch (Exception closed) {
                    // test over
                }
            }, "never-reading-upstream");
            acceptor.setDaemon(true);
            acceptor.start();
            Gateway gw = GatewayFixture.start(GatewayFixture.simple(
                    List.of(new HostConfig("127.0.0.1", upstream.getLocalPort(), 1)), HttpOptions.defaults()));
            try (RawH2 c = new RawH2(gw.port("web"))) {
                c.frame(RawH2.HEADERS, RawH2.END_HEADERS, 1, RawH2.block(":method", "POST", ":scheme", "http",
                        ":authority", "localhost", ":path", "/upload"));
                c.flush();
                c.socket().setSoTimeout(100);
                long stream = 65_535;
                long connection = 65_535;
                long sent = 0;
                long lastUpdate = System.nanoTime();
                long end = lastUpdate + 15_000_000_000L;
                byte[] chunk = new byte[16_384];
                boolean stalled = false;
                while (System.nanoTime() < end) {
                    if (Math.min(stream, connection) >= chunk.length) {
                        c.frame(RawH2.DATA, 0, 1, chunk);
                        c.flush();
                        stream -= chunk.length;
                        connection -= chunk.length;
                        sent += chunk.length;
                        continue;
                    }
                    RawH2.Frame f;
                    try {
                        f = c.read();
                    } catch (SocketTimeoutException none) {
                        f = null;
                    }
                    if (f != null && f.type() == RawH2.WINDOW_UPDATE) {
                        long inc = ((f.payload()[0] & 0x7FL) << 24) | ((f.payload()[1] & 0xFFL) << 16)
                                | ((f.payload()[2] & 0xFFL) << 8) | (f.payload()[3] & 0xFFL);
                        if (f.stream() == 0) {
                            connection += inc;
                        } else {
                            stream += inc;
                        }
                        lastUpdate = System.nanoTime();
                    } else if (System.nanoTime() - lastUpdate > 1_500_000_000L) {
                        stalled = true; // no window for 1.5 s: the gateway stopped reading the stream
                        break;
                    }
                }
                assertThat(stalled).as("the client's window closes (%d bytes sent)", sent).isTrue();
                // what the kernel buffers of the upstream socket took, plus one window: bounded
                assertThat(sent).isLessThan(64L << 20);
            } finally {
                for (Socket s : held) {
                    s.close();
                }
                gw.close();
            }
        }
    }
}
