package io.sluice.server.tls;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.netty.handler.ssl.OpenSslSessionTicketKey;
import io.sluice.core.config.CertificateConfig;
import io.sluice.core.config.TlsConfig;
import io.sluice.core.time.ManualScheduler;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

/** Rotation without restart on a fake clock: replaced files are reloaded, a half-written pair keeps the old one. */
class CertificateWatcherTest {

    static final Duration EVERY = Duration.ofSeconds(2);

    @TempDir
    Path dir;
    final ManualScheduler clock = new ManualScheduler(1_000_000_000L);
    DownstreamTls tls;
    CertificateWatcher watcher;

    @AfterEach
    void close() {
        if (watcher != null) {
            watcher.close();
        }
        if (tls != null) {
            tls.close();
        }
    }

    String subject() {
        return tls.current().loaded().get(0).subject();
    }

    /** Replaces {@code target} by rename, the way cert-manager and ACME clients do. */
    void replace(Path source, Path target) throws Exception {
        Path tmp = target.resolveSibling(target.getFileName() + ".tmp");
        Files.copy(source, tmp, StandardCopyOption.REPLACE_EXISTING);
        Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    }

    @Test
    void aReplacedPairIsLoadedAfterItSettlesAndAHalfWrittenOneKeepsTheOld() throws Exception {
        TestPki pki = TestPki.ca(dir, "rot");
        TestPki.Leaf v1 = pki.leaf("v1", "v1.test", 5);
        TestPki.Leaf v2 = pki.leaf("v2", "v2.test", 5);
        TestPki.Leaf v3 = pki.leaf("v3", "v3.test", 5);
        Path chain = dir.resolve("tls.crt");
        Path key = dir.resolve("tls.key");
        Files.copy(v1.chain(), chain);
        Files.copy(v1.key(), key);
        tls = DownstreamTls.start("w", TlsConfig.builder().certificates(CertificateConfig.pem(chain.toString(), key.toString()))
                .watchInterval(EVERY).ticketKeyRotation(Duration.ofHours(1)).build(), new SimpleMeterRegistry(), e -> clock);
        watcher = CertificateWatcher.start(tls, clock);
        assertThat(subject()).isEqualTo("CN=v1.test");

        replace(v2.chain(), chain);
        replace(v2.key(), key);
        clock.advanceNanos(EVERY.toNanos()); // sees the change
        assertThat(subject()).isEqualTo("CN=v1.test");
        clock.advanceNanos(EVERY.toNanos()); // unchanged for an interval: reloads
        assertThat(subject()).isEqualTo("CN=v2.test");
        assertThat(tls.metrics().reloads(true)).isEqualTo(1);

        // a new chain whose key is not there yet (half of the pair written): the old pair stays
        String text = Files.readString(v3.chain());
        Files.writeString(chain, text.substring(0, text.length() / 2));
        clock.advanceNanos(2 * EVERY.toNanos());
        assertThat(subject()).isEqualTo("CN=v2.test");
        assertThat(tls.metrics().reloads(false)).isEqualTo(1);
        clock.advanceNanos(2 * EVERY.toNanos());
        assertThat(tls.metrics().reloads(false)).as("not retried until the files change").isEqualTo(1);

        replace(v3.chain(), chain);
        replace(v3.key(), key);
        clock.advanceNanos(2 * EVERY.toNanos());
        assertThat(subject()).isEqualTo("CN=v3.test");
        assertThat(tls.metrics().reloads(true)).isEqualTo(2);
    }

    @Test
    void ticketKeysRotateOnScheduleKeepingThePreviousKey() throws Exception {
        TestPki pki = TestPki.ca(dir, "tk");
        TestPki.Leaf v1 = pki.leaf("t1", "t1.test", 5);
        tls = DownstreamTls.start("t", TlsConfig.builder().certificates(CertificateConfig.pem(v1.chain().toString(),
                v1.key().toString())).watchFiles(false).ticketKeyRotation(Duration.ofMinutes(10)).build(),
                new SimpleMeterRegistry(), e -> clock);
        watcher = CertificateWatcher.start(tls, clock);
        OpenSslSessionTicketKey first = tls.ticketKeys()[0];
        clock.advanceNanos(Duration.ofMinutes(10).toNanos() - 1);
        assertThat(tls.ticketKeys()).containsExactly(first);
        clock.advanceNanos(1);
        assertThat(tls.ticketKeys()).hasSize(2);
        assertThat(tls.ticketKeys()[1]).isSameAs(first);
        assertThat(tls.ticketKeys()[0].name()).isNotEqualTo(first.name());
    }
}
