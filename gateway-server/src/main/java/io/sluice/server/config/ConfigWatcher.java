package io.sluice.server.config;

import io.sluice.core.config.ConfigException;
import io.sluice.core.config.DurationFormat;
import io.sluice.core.config.WatchConfig;
import io.sluice.core.time.Cancellable;
import io.sluice.core.time.Scheduler;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.FileTime;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.Arrays;
import java.util.Objects;
import java.util.function.Supplier;

/**
 * Polls a config file on a {@link Scheduler} and runs a reload when its content has changed
 * ({@code watch_config}, or {@code sluice --watch}). Polling rather than a file-system watch:
 * editors and config-management tools replace files by rename, and a poll on the injected
 * scheduler runs the same on the fake clock of the tests.
 *
 * <p>Every {@code interval} it reads the file's size, modification time and file key (a stat,
 * no read). When they differ from the previous poll the file is changing: it waits. When they
 * have stayed the same for one interval it reads the content and compares its SHA-256 with the
 * content it last reloaded (or the file as it was when watching began): a file touched but not
 * changed does nothing, a changed one runs the reload once (an invalid content is not retried until
 * the file changes again). An editor writing in several steps is therefore reloaded once, whole.
 *
 * <p>A file that disappears (an editor's rename dance) is not an error: when it has been missing or
 * unreadable for {@value #MISSING_INTERVALS} intervals one WARN line says so, and one INFO line when
 * it is back. The settings are read at every poll: a reload that changes the interval applies at
 * the next poll; one that turns {@code enabled} off stops the polling of the file (the watcher then
 * only checks the settings each interval), and turning it back on starts over from the file as it is.
 *
 * <p>The state belongs to the scheduler's thread; {@link #start} must run before the first poll.
 * The reload runs on that thread too, so the scheduler must be one that may block (not an event loop
 * of the data path).
 */
public final class ConfigWatcher implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(ConfigWatcher.class);

    /** Intervals a file may be missing before it is reported. */
    static final int MISSING_INTERVALS = 3;

    private final Path file;
    private final Scheduler scheduler;
    private final Supplier<WatchConfig> settings;
    private final Runnable reload;

    private boolean watching;
    /** What the last poll saw; null when the file was missing (or before the first look). */
    private Stamp seen;
    /** The stamp changed at the last poll: wait for one stable interval. */
    private boolean changing;
    /** SHA-256 of the content last handed to the reload (or read at start); null if none. */
    private byte[] applied;
    private long missingSinceNanos = -1;
    private boolean missingReported;
    private int missingWarnings;
    private int reloads;
    private volatile boolean closed;
    private volatile Cancellable next = Cancellable.NOOP;

    /**
     * @param settings the current {@code watch_config} (read at every poll)
     * @param reload   re-reads the file and applies it, typically {@code gateway::reload} (which logs and
     *                 counts the result; a {@link ConfigException} it throws is not logged again here)
     */
    public ConfigWatcher(Path file, Scheduler scheduler, Supplier<WatchConfig> settings, Runnable reload) {
        this.file = Objects.requireNonNull(file, "file");
        this.scheduler = Objects.requireNonNull(scheduler, "scheduler");
        this.settings = Objects.requireNonNull(settings, "settings");
        this.reload = Objects.requireNonNull(reload, "reload");
    }

    /** Takes the file as it is now as the running one and schedules the first poll. */
    public void start() {
        WatchConfig w = settings.get();
        if (w.enabled()) {
            begin(w);
        }
        next = scheduler.schedule(this::tick, w.interval().toNanos());
    }

    /** Stops polling. */
    @Override
    public void close() {
        closed = true;
        next.cancel();
    }

    /** The file watched. */
    public Path file() {
        return file;
    }

    /** Reloads this watcher has run (for tests and status). */
    int reloads() {
        return reloads;
    }

    /** WARN lines logged about a missing file. */
    int missingWarnings() {
        return missingWarnings;
    }

    private void tick() {
        if (closed) {
            return;
        }
        WatchConfig w = settings.get();
        try {
            if (!w.enabled()) {
                if (watching) {
                    watching = false;
                    log.info("stopped watching config file {}: watch_config.enabled is now false", file);
                }
            } else if (!watching) {
                begin(w);
            } else {
                poll(w);
            }
        } catch (RuntimeException e) {
            log.warn("config file watch: poll of {} failed, trying again next interval: {}", file, e.toString());
        } finally {
            if (!closed) {
                next = scheduler.schedule(this::tick, settings.get().interval().toNanos());
                if (closed) {
                    next.cancel();
                }
            }
        }
    }

    private void begin(WatchConfig w) {
        watching = true;
        changing = false;
        missingSinceNanos = -1;
        missingReported = false;
        try {
            seen = stamp();
            applied = hash();
        } catch (IOException e) {
            seen = null;
            applied = null;
        }
        log.info("watching config file {} for changes every {}", file, DurationFormat.format(w.interval()));
    }

    private void poll(WatchConfig w) {
        Stamp now;
        try {
            now = stamp();
        } catch (IOException e) {
            missing(w, e);
            return;
        }
        if (missingSinceNanos >= 0) {
            if (missingReported) {
                log.info("config file {} is back", file);
            }
            missingSinceNanos = -1;
            missingReported = false;
        }
        if (!now.equals(seen)) {
            seen = now;
            changing = true; // still being written, perhaps: wait until it stays the same for an interval
            return;
        }
        if (!changing) {
            return;
        }
        byte[] content;
        Stamp after;
        try {
            content = hash();
            after = stamp();
        } catch (IOException e) {
            missing(w, e);
            return;
        }
        if (!after.equals(now)) {
            seen = after; // written while we read it: wait again
            return;
        }
        changing = false;
        if (Arrays.equals(content, applied)) {
            return; // touched, or changed and changed back: nothing to do
        }
        applied = content;
        reloads++;
        try {
            reload.run();
        } catch (ConfigException e) {
            // rejected: Gateway.reload() has logged it and counted it; the running config stays
        } catch (RuntimeException e) {
            log.warn("config file {} changed but the reload failed: {}", file, e.toString());
        }
    }

    private void missing(WatchConfig w, IOException e) {
        long t = scheduler.ticker().nanoTime();
        seen = null;
        changing = false;
        if (missingSinceNanos < 0) {
            missingSinceNanos = t;
            return;
        }
        long gone = t - missingSinceNanos;
        if (!missingReported && gone >= w.interval().toNanos() * MISSING_INTERVALS) {
            missingReported = true;
            missingWarnings++;
            String why = e instanceof NoSuchFileException ? "missing" : "unreadable (" + e + ")";
            log.warn("config file {} has been {} for {} ms; still watching, the running config stays", file, why,
                    Duration.ofNanos(gone).toMillis());
        }
    }

    private Stamp stamp() throws IOException {
        BasicFileAttributes a = Files.readAttributes(file, BasicFileAttributes.class);
        return new Stamp(a.lastModifiedTime(), a.size(), a.fileKey());
    }

    private byte[] hash() throws IOException {
        try {
            return MessageDigest.getInstance("SHA-256").digest(Files.readAllBytes(file));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JVM has SHA-256", e);
        }
    }

    /** What a stat tells about the file: a change of any of these may be a change of content. */
    private record Stamp(FileTime modified, long size, Object key) {
    }
}
