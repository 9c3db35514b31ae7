package io.sluice.server.tls;

import io.sluice.core.time.Cancellable;
import io.sluice.core.time.Scheduler;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;

/**
 * Polls the certificate, key and CA files of one TLS listener on a {@link Scheduler} that may
 * block (not a data-path event loop) and reloads them when their content changed, the way
 * cert-manager or an ACME client replaces them: a file replaced by rename, or a directory symlink
 * swapped atomically (paths are resolved at every poll, so {@code ..data}-style symlinks work).
 * Like {@code ConfigWatcher}: a stat per file each {@code watch_interval}; when the stats changed
 * it waits until they are unchanged for one interval (a writer still at work), then hashes the
 * contents and reloads once if they differ from what was last tried. A pair that does not load
 * keeps the running certificates (one log line, {@code sluice_tls_reloads_total{outcome="failure"}})
 * and is not retried until the files change again. It also rotates the session ticket keys every
 * {@code ticket_key_rotation}.
 */
public final class CertificateWatcher implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(CertificateWatcher.class);

    private final DownstreamTls tls;
    private final Scheduler scheduler;
    private Cancellable poll;
    private Cancellable tickets;
    private List<String> lastStat;
    private boolean changing;
    private byte[] lastHash;

    private CertificateWatcher(DownstreamTls tls, Scheduler scheduler) {
        this.tls = tls;
        this.scheduler = scheduler;
    }

    /** Starts polling (when {@code watch_files}) and ticket rotation (when {@code session_tickets}). */
    public static CertificateWatcher start(DownstreamTls tls, Scheduler scheduler) {
        CertificateWatcher w = new CertificateWatcher(tls, scheduler);
        var c = tls.current().config();
        w.lastStat = w.stat();
        w.lastHash = w.hash();
        if (c.watchFiles()) {
            long every = c.watchInterval().toNanos();
            w.poll = scheduler.scheduleWithFixedDelay(w::poll, every, every);
        }
        if (c.sessionTickets()) {
            long every = c.ticketKeyRotation().toNanos();
            w.tickets = scheduler.scheduleWithFixedDelay(tls::rotateTicketKeys, every, every);
        }
        return w;
    }

    /** One poll: public for tests that drive it directly. */
    public void poll() {
        try {
            List<String> now = stat();
            if (!now.equals(lastStat)) {
                lastStat = now;
                changing = true; // wait until a poll sees them unchanged
                return;
            }
            if (!changing) {
                return;
            }
            changing = false;
            byte[] h = hash();
            if (h == null || Arrays.equals(h, lastHash)) {
                return;
            }
            lastHash = h;
            tls.reloadFiles("certificate files changed");
        } catch (RuntimeException e) {
            log.warn("listener {}: certificate watch failed: {}", tls.listener(), e.toString());
        }
    }

    /** Real path, size and modification time of every file ("missing" when absent). */
    private List<String> stat() {
        List<String> out = new ArrayList<>();
        for (String f : tls.current().config().files()) {
            try {
                Path real = Path.of(f).toRealPath();
                BasicFileAttributes a = Files.readAttributes(real, BasicFileAttributes.class);
                out.add(real + "|" + a.size() + "|" + a.lastModifiedTime().toMillis() + "|" + Objects.toString(a.fileKey()));
            } catch (IOException e) {
                out.add(f + "|missing");
            }
        }
        return out;
    }

    private byte[] hash() {
        try {
            MessageDigest d = MessageDigest.getInstance("SHA-256");
            for (String f : tls.current().config().files()) {
                try {
                    d.update(Files.readAllBytes(Path.of(f)));
                } catch (IOException e) {
                    return null; // missing now: wait for it
                }
            }
            return d.digest();
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    @Override
    public void close() {
        if (poll != null) {
            poll.cancel();
        }
        if (tickets != null) {
            tickets.cancel();
        }
    }
}
