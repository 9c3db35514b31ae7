package io.sluice.server.config;

import io.sluice.core.config.ConfigException;
import io.sluice.core.config.GatewayConfig;
import io.sluice.core.config.WatchConfig;
import io.sluice.core.time.ManualScheduler;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The watcher's decisions on the fake clock, against a real file: a change is reloaded once it has
 * been stable for an interval, a touch is not, a file written in steps is reloaded once and whole,
 * a briefly missing file is no error, an invalid file is reloaded (and rejected) once and the next
 * valid one applied. Every write sets a new modification time explicitly: the test does not depend
 * on the file system's timestamp resolution.
 */
class ConfigWatcherTest {

    private static final Duration INTERVAL = Duration.ofSeconds(2);

    @TempDir
    Path dir;

    private final ManualScheduler clock = new ManualScheduler();
    private Path file;
    private long mtime = 1_700_000_000_000L;
    private WatchConfig settings = new WatchConfig(true, INTERVAL);
    /** What the reload did, like Main's report: "applied hosts=[...]" or "rejected <message>". */
    private final List<String> outcomes = new ArrayList<>();
    private GatewayConfig running;
    private ConfigWatcher watcher;

    private static String config(int weight) {
        return """
                {"listeners": [{"name": "web", "port": 0, "routes": [{"cluster": "api"}]}],
                 "clusters": [{"name": "api", "hosts": [{"address": "127.0.0.1:9000", "weight": %d}]}]}
                """.formatted(weight);
    }

    @BeforeEach
    void start() throws IOException {
        file = dir.resolve("sluice.json");
        write(config(1));
        running = ConfigLoader.load(file).config();
        watcher = new ConfigWatcher(file, clock, () -> settings, () -> {
            try {
                running = ConfigLoader.load(file).config();
                outcomes.add("applied weight=" + running.cluster("api").hosts().get(0).weight());
            } catch (ConfigException e) {
                outcomes.add("rejected " + e.getMessage());
            }
        });
        watcher.start();
    }

    @AfterEach
    void stop() {
        watcher.close();
    }

    /** Writes in place with a modification time no earlier write had. */
    private void write(String content) throws IOException {
        Files.writeString(file, content);
        Files.setLastModifiedTime(file, FileTime.fromMillis(mtime += 1000));
    }

    private void polls(int n) {
        clock.advance(INTERVAL.multipliedBy(n));
    }

    @Test
    void aChangeIsReloadedOnceItHasBeenStableForOneInterval() throws IOException {
        polls(3);
        assertThat(outcomes).isEmpty();

        write(config(5));
        polls(1); // sees the change: waits
        assertThat(outcomes).isEmpty();
        polls(1); // unchanged since: reloads
        assertThat(outcomes).containsExactly("applied weight=5");
        polls(5);
        assertThat(outcomes).hasSize(1);
        assertThat(watcher.reloads()).isEqualTo(1);
    }

    @Test
    void aFileWrittenInStepsIsReloadedOnceWhenWhole() throws IOException {
        String full = config(7);
        write(full.substring(0, full.length() / 2)); // the editor has written half of it
        polls(1);
        write(full.substring(0, full.length() - 10)); // more of it, still not valid
        polls(1);
        assertThat(outcomes).isEmpty();
        write(full);
        polls(1);
        assertThat(outcomes).isEmpty();
        polls(1);
        assertThat(outcomes).containsExactly("applied weight=7");
        polls(4);
        assertThat(outcomes).hasSize(1);
    }

    @Test
    void aTouchOrTheSameContentWrittenAgainDoesNothing() throws IOException {
        Files.setLastModifiedTime(file, FileTime.fromMillis(mtime += 1000));
        polls(4);
        write(config(1)); // same bytes, new time
        polls(4);
        assertThat(outcomes).isEmpty();

        write(config(2));
        write(config(1)); // changed and changed back before a poll saw it
        polls(4);
        assertThat(outcomes).isEmpty();
        assertThat(watcher.reloads()).isZero();
    }

    @Test
    void aFileReplacedByRenameIsReloaded() throws IOException {
        Path tmp = dir.resolve("sluice.json.tmp");
        Files.writeString(tmp, config(4));
        Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        Files.setLastModifiedTime(file, FileTime.fromMillis(mtime += 1000));
        polls(2);
        assertThat(outcomes).containsExactly("applied weight=4");
    }

    @Test
    void aBrieflyMissingFileIsNoErrorAndALongMissingOneIsReportedOnce() throws IOException {
        Files.delete(file); // an editor's rename dance
        polls(3);
        assertThat(watcher.missingWarnings()).isZero();
        write(config(1)); // back with the same content
        polls(4);
        assertThat(outcomes).isEmpty();
        assertThat(watcher.missingWarnings()).isZero();

        Files.delete(file);
        polls(3); // first seen missing at the first of these polls: gone for 2 intervals
        assertThat(watcher.missingWarnings()).isZero();
        polls(1); // 3 intervals
        assertThat(watcher.missingWarnings()).isEqualTo(1);
        polls(20);
        assertThat(watcher.missingWarnings()).isEqualTo(1);
        assertThat(outcomes).isEmpty();

        write(config(3)); // back, changed
        polls(1);
        assertThat(outcomes).isEmpty();
        polls(1);
        assertThat(outcomes).containsExactly("applied weight=3");

        Files.delete(file); // missing again later: reported again (once)
        polls(5);
        assertThat(watcher.missingWarnings()).isEqualTo(2);
    }

    @Test
    void anInvalidFileIsRejectedOnceAndTheNextValidOneApplied() throws IOException {
        write(config(-5));
        polls(2);
        assertThat(outcomes).hasSize(1);
        assertThat(outcomes.get(0)).startsWith("rejected $.clusters[0].hosts[0].weight:").contains("-5");
        assertThat(running.cluster("api").hosts().get(0).weight()).isEqualTo(1); // the old config runs
        polls(10);
        assertThat(outcomes).hasSize(1); // not retried until the file changes

        write(config(6));
        polls(2);
        assertThat(outcomes).hasSize(2).last().isEqualTo("applied weight=6");
    }

    @Test
    void theIntervalAndTheSwitchAreReadAtEveryPoll() throws IOException {
        settings = new WatchConfig(true, Duration.ofMillis(500));
        polls(1); // the poll scheduled with the old interval runs, the next ones every 500 ms
        write(config(2));
        clock.advance(Duration.ofMillis(1000));
        assertThat(outcomes).containsExactly("applied weight=2");

        settings = settings.withEnabled(false);
        clock.advance(Duration.ofMillis(500));
        write(config(3));
        clock.advance(Duration.ofSeconds(10));
        assertThat(outcomes).hasSize(1); // not watching

        settings = settings.withEnabled(true); // starts over from the file as it is now
        clock.advance(Duration.ofMillis(500));
        assertThat(outcomes).hasSize(1);
        write(config(4));
        clock.advance(Duration.ofMillis(1000));
        assertThat(outcomes).containsExactly("applied weight=2", "applied weight=4");
    }

    @Test
    void aReloadThatThrowsLikeGatewayReloadDoesNotStopTheWatching() throws IOException {
        watcher.close();
        List<String> calls = new ArrayList<>();
        // like gateway::reload, which throws the ConfigException of a rejected file
        ConfigWatcher throwing = new ConfigWatcher(file, clock, () -> settings, () -> {
            GatewayConfig c = ConfigLoader.load(file).config();
            calls.add("weight=" + c.cluster("api").hosts().get(0).weight());
        });
        throwing.start();
        try {
            write(config(-1));
            polls(2);
            assertThat(throwing.reloads()).isEqualTo(1);
            assertThat(calls).isEmpty();
            write(config(8));
            polls(2);
            assertThat(calls).containsExactly("weight=8");
        } finally {
            throwing.close();
        }
    }

    @Test
    void closeStopsPolling() throws IOException {
        watcher.close();
        write(config(9));
        polls(5);
        assertThat(outcomes).isEmpty();
        assertThat(clock.pendingTasks()).isZero();
    }
}
