package io.sluice.server.tls;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.netty.channel.embedded.EmbeddedChannel;
import io.sluice.codec.testing.Bufs;
import io.sluice.core.config.CertificateConfig;
import io.sluice.core.config.TlsConfig;
import io.sluice.core.time.ManualScheduler;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import javax.net.ssl.SSLEngine;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/** The handshake timeout runs on the listener's scheduler: exactly at the deadline on a fake clock. */
class TlsHandshakeTimeoutTest {

    static final Duration TIMEOUT = Duration.ofSeconds(3);

    @TempDir
    static Path dir;
    static TestPki pki;
    static TestPki.Leaf leaf;
    final ManualScheduler clock = new ManualScheduler(1_000_000_000L);
    DownstreamTls tls;

    @BeforeAll
    static void pki() {
        pki = TestPki.ca(dir, "hs");
        leaf = pki.leaf("hs", "hs.test", 5, "DNS:hs.test");
    }

    @AfterEach
    void close() {
        if (tls != null) {
            tls.close();
        }
    }

    EmbeddedChannel connect() throws Exception {
        tls = DownstreamTls.start("t", TlsConfig.builder()
                .certificates(CertificateConfig.pem(leaf.chain().toString(), leaf.key().toString()))
                .handshakeTimeout(TIMEOUT).build(), new SimpleMeterRegistry(), e -> clock);
        EmbeddedChannel ch = EmbeddedChannel.builder().register(false).build();
        tls.addHandlers(ch.pipeline(), null);
        ch.register();
        return ch;
    }

    /** The first bytes of a real ClientHello. */
    static byte[] clientHello() throws Exception {
        SSLEngine e = TestPki.trusting(pki.caCert()).createSSLEngine("hs.test", 443);
        e.setUseClientMode(true);
        ByteBuffer out = ByteBuffer.allocate(e.getSession().getPacketBufferSize());
        e.wrap(ByteBuffer.allocate(0), out);
        out.flip();
        byte[] b = new byte[out.remaining()];
        out.get(b);
        return b;
    }

    @Test
    void aClientThatStopsMidHandshakeIsClosedExactlyAtTheTimeout() throws Exception {
        EmbeddedChannel ch = connect();
        byte[] hello = clientHello();
        ch.writeInbound(Bufs.copied(Arrays.copyOf(hello, hello.length / 2))); // stops in the middle of its ClientHello
        clock.advanceNanos(TIMEOUT.toNanos() - 1);
        ch.runPendingTasks();
        assertThat(ch.isOpen()).isTrue();
        clock.advanceNanos(1);
        ch.runPendingTasks();
        assertThat(ch.isOpen()).isFalse();
        assertThat(tls.metrics().handshakes(false, "timeout")).isEqualTo(1);
        assertThat(clock.pendingTasks()).isZero();
        ch.finishAndReleaseAll();
    }

    @Test
    void aSilentClientIsClosedAtTheTimeoutToo() throws Exception {
        EmbeddedChannel ch = connect();
        clock.advanceNanos(TimeUnit.SECONDS.toNanos(3));
        ch.runPendingTasks();
        assertThat(ch.isOpen()).isFalse();
        assertThat(tls.metrics().handshakes(false, "timeout")).isEqualTo(1);
        assertThat(tls.metrics().handshakes(false, "closed")).isZero(); // counted once
        ch.finishAndReleaseAll();
    }

    @Test
    void aCompleteClientHelloGetsAnAnswerAndTheTimerKeepsRunningUntilTheHandshakeEnds() throws Exception {
        EmbeddedChannel ch = connect();
        ch.writeInbound(Bufs.copied(clientHello()));
        Object first = ch.readOutbound();
        assertThat(first).as("ServerHello").isNotNull();
        io.netty.util.ReferenceCountUtil.release(first);
        assertThat(clock.pendingTasks()).isEqualTo(1);
        clock.advanceNanos(TIMEOUT.toNanos());
        ch.runPendingTasks();
        assertThat(ch.isOpen()).isFalse();
        ch.finishAndReleaseAll();
    }
}
