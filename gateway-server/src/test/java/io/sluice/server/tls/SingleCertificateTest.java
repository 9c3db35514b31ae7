package io.sluice.server.tls;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.netty.buffer.ByteBuf;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.ssl.SniHandler;
import io.netty.handler.ssl.SslHandler;
import io.sluice.codec.testing.Bufs;
import io.sluice.core.config.CertificateConfig;
import io.sluice.core.config.TlsConfig;
import io.sluice.core.time.ManualScheduler;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLEngineResult;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A listener with one certificate gets its {@code SslHandler} at once (no SNI handler); the snapshot
 * is still read per connection, so a rotation serves new connections the new certificate.
 */
class SingleCertificateTest {

    @TempDir
    static Path dir;
    static TestPki pki;
    static TestPki.Leaf v1;
    static TestPki.Leaf v2;
    final ManualScheduler clock = new ManualScheduler(1_000_000_000L);
    final List<EmbeddedChannel> channels = new ArrayList<>();
    DownstreamTls tls;

    @BeforeAll
    static void pki() {
        pki = TestPki.ca(dir, "one");
        v1 = pki.leaf("one1", "one1.test", 5, "DNS:one.test");
        v2 = pki.leaf("one2", "one2.test", 5, "DNS:one.test");
    }

    @AfterEach
    void close() {
        for (EmbeddedChannel ch : channels) {
            ch.finishAndReleaseAll();
        }
        if (tls != null) {
            tls.close();
        }
    }

    private EmbeddedChannel connect() throws Exception {
        EmbeddedChannel ch = EmbeddedChannel.builder().register(false).build();
        tls.addHandlers(ch.pipeline(), null);
        ch.register();
        channels.add(ch);
        return ch;
    }

    @Test
    void oneCertificateGetsTheSslHandlerAtOnceAndNewConnectionsGetTheRotatedCertificate() throws Exception {
        Path chain = dir.resolve("live.pem");
        Path key = dir.resolve("live.key");
        Files.copy(v1.chain(), chain, StandardCopyOption.REPLACE_EXISTING);
        Files.copy(v1.key(), key, StandardCopyOption.REPLACE_EXISTING);
        tls = DownstreamTls.start("one", TlsConfig.builder()
                .certificates(CertificateConfig.pem(chain.toString(), key.toString(), "one.test"))
                .watchFiles(false).build(), new SimpleMeterRegistry(), e -> clock);

        EmbeddedChannel first = connect();
        assertThat(first.pipeline().get(SniHandler.class)).isNull();
        assertThat(first.pipeline().names()).startsWith(SslHandler.class.getName(), "tls-handshake");
        assertThat(handshake(first)).isEqualTo("CN=one1.test");

        Files.copy(v2.chain(), chain, StandardCopyOption.REPLACE_EXISTING);
        Files.copy(v2.key(), key, StandardCopyOption.REPLACE_EXISTING);
        assertThat(tls.reloadFiles("test")).isTrue();

        EmbeddedChannel second = connect();
        assertThat(second.pipeline().get(SniHandler.class)).isNull();
        assertThat(handshake(second)).as("a connection after the rotation").isEqualTo("CN=one2.test");
        assertThat(tls.metrics()).isNotNull();
    }

    @Test
    void severalCertificatesKeepTheSniHandler() throws Exception {
        tls = DownstreamTls.start("two", TlsConfig.builder()
                .certificates(CertificateConfig.pem(v1.chain().toString(), v1.key().toString(), "a.test"),
                        CertificateConfig.pem(v2.chain().toString(), v2.key().toString(), "one.test"))
                .watchFiles(false).build(), new SimpleMeterRegistry(), e -> clock);
        EmbeddedChannel ch = connect();
        assertThat(ch.pipeline().get(SniHandler.class)).isNotNull();
        assertThat(handshake(ch)).as("SNI one.test picks the second certificate").isEqualTo("CN=one2.test");
        assertThat(ch.pipeline().get(SniHandler.class)).isNull();
        assertThat(ch.pipeline().get(SslHandler.class)).isNotNull();
    }

    /** A full handshake of a JDK client engine (SNI one.test) with the server channel; returns the server certificate's subject. */
    private static String handshake(EmbeddedChannel server) throws Exception {
        SSLEngine c = TestPki.trusting(pki.caCert()).createSSLEngine("one.test", 443);
        c.setUseClientMode(true);
        c.beginHandshake();
        ByteBuffer net = ByteBuffer.allocate(c.getSession().getPacketBufferSize() * 2);
        ByteBuffer in = ByteBuffer.allocate(64 * 1024);
        ByteBuffer app = ByteBuffer.allocate(c.getSession().getApplicationBufferSize() * 2);
        for (int i = 0; i < 100 && c.getHandshakeStatus() != SSLEngineResult.HandshakeStatus.NOT_HANDSHAKING
                && c.getHandshakeStatus() != SSLEngineResult.HandshakeStatus.FINISHED; i++) {
            switch (c.getHandshakeStatus()) {
                case NEED_TASK -> {
                    Runnable t;
                    while ((t = c.getDelegatedTask()) != null) {
                        t.run();
                    }
                }
                case NEED_WRAP -> {
                    net.clear();
                    c.wrap(ByteBuffer.allocate(0), net);
                    net.flip();
                    byte[] b = new byte[net.remaining()];
                    net.get(b);
                    if (b.length > 0) {
                        server.writeInbound(Bufs.copied(b));
                    }
                }
                default -> { // NEED_UNWRAP
                    ByteBuf out;
                    while ((out = server.readOutbound()) != null) {
                        try {
                            byte[] b = new byte[out.readableBytes()];
                            out.readBytes(b);
                            in.put(b);
                        } finally {
                            out.release();
                        }
                    }
                    in.flip();
                    c.unwrap(in, app);
                    in.compact();
                }
            }
        }
        assertThat(server.isOpen()).isTrue();
        return ((X509Certificate) c.getSession().getPeerCertificates()[0]).getSubjectX500Principal().getName();
    }
}
