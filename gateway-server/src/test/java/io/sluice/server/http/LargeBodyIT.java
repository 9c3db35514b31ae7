package io.sluice.server.http;

import io.netty.buffer.PooledByteBufAllocator;
import io.sluice.server.Gateway;
import io.sluice.server.testing.GatewayFixture;
import io.sluice.server.testing.TestBackend;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import java.io.InputStream;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.zip.CRC32;

import static io.sluice.server.testing.GatewayFixture.uri;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * 50 MiB bodies both ways through the gateway: they are streamed, not aggregated, so the direct
 * memory in use stays far below the body size, even while the client stops reading.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class LargeBodyIT {

    private static final long SIZE = 50L * 1024 * 1024;
    /** Everything in this JVM (backend, gateway) together may hold at most this much direct memory. */
    private static final long BOUND = 24L * 1024 * 1024;

    private TestBackend backend;
    private Gateway gw;
    private final HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    @BeforeAll
    void start() throws Exception {
        backend = TestBackend.start();
        gw = GatewayFixture.start(GatewayFixture.simple(backend));
    }

    @AfterAll
    void stop() {
        gw.close();
        backend.close();
    }

    private static long directInUse() {
        return PooledByteBufAllocator.DEFAULT.metric().usedDirectMemory();
    }

    @Test
    void uploadOf50MiBArrivesIntactWithBoundedMemory() throws Exception {
        CRC32 crc = new CRC32();
        for (long i = 0; i < SIZE; i++) {
            crc.update(TestBackend.pattern(i));
        }
        long[] peak = {0};
        InputStream body = new InputStream() {
            private long pos;

            @Override
            public int read() {
                return pos < SIZE ? TestBackend.pattern(pos++) : -1;
            }

            @Override
            public int read(byte[] b, int off, int len) {
                if (pos >= SIZE) {
                    return -1;
                }
                int n = (int) Math.min(len, SIZE - pos);
                for (int i = 0; i < n; i++) {
                    b[off + i] = TestBackend.pattern(pos++);
                }
                peak[0] = Math.max(peak[0], directInUse());
                return n;
            }
        };
        HttpResponse<String> r = client.send(HttpRequest.newBuilder(uri(gw, "/count"))
                .POST(HttpRequest.BodyPublishers.fromPublisher(HttpRequest.BodyPublishers.ofInputStream(() -> body), SIZE))
                .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(r.body()).isEqualTo("bytes=" + SIZE + " crc=" + crc.getValue());
        assertThat(peak[0]).as("direct memory in use while uploading").isLessThan(BOUND);
    }

    @Test
    void downloadOf50MiBIsStreamedAndAStalledReaderStopsTheUpstream() throws Exception {
        HttpResponse<InputStream> r = client.send(HttpRequest.newBuilder(uri(gw, "/download?bytes=" + SIZE))
                .timeout(Duration.ofSeconds(10)).build(),
                HttpResponse.BodyHandlers.ofInputStream());
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(r.headers().firstValueAsLong("content-length")).hasValue(SIZE);
        try (InputStream in = r.body()) {
            byte[] buf = new byte[64 * 1024];
            long pos = 0;
            long peak = 0;
            boolean paused = false;
            int n;
            while ((n = in.read(buf)) > 0) {
                for (int i = 0; i < n; i++) {
                    if (buf[i] != TestBackend.pattern(pos + i)) {
                        throw new AssertionError("byte " + (pos + i) + " differs");
                    }
                }
                pos += n;
                peak = Math.max(peak, directInUse());
                if (!paused && pos > 4 * 1024 * 1024) {
                    paused = true;
                    // the client stops reading: socket buffers fill, the gateway stops reading the
                    // upstream, the backend stops producing; memory must not grow toward 50 MiB
                    Thread.sleep(700);
                    peak = Math.max(peak, directInUse());
                }
            }
            assertThat(pos).isEqualTo(SIZE);
            assertThat(peak).as("direct memory in use while downloading").isLessThan(BOUND);
        }
    }
}
