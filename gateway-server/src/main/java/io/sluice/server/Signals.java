package io.sluice.server;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import sun.misc.Signal;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Runs an action on SIGTERM and SIGINT instead of the JVM's default exit, so the gateway can drain
 * and then exit with status 0 (a shutdown hook alone would make the process exit with 143/130);
 * and a reload action on SIGHUP.
 */
final class Signals {

    private static final Logger log = LoggerFactory.getLogger(Signals.class);

    private Signals() {
    }

    /**
     * Runs {@code action} on its own thread on every SIGHUP (the reload signal). Returns false where
     * the JVM does not let us handle it (then SIGHUP keeps its default: the JVM exits), or where
     * SIGHUP was ignored when the process started (under {@code nohup}): the JVM then leaves it
     * ignored, so a reload must come from {@code POST /reload} or {@code watch_config}.
     */
    static boolean onHangup(Runnable action) {
        if (ignoredAtStart(1)) {
            log.warn("SIGHUP is ignored by this process (started under nohup?): reload with POST /reload or watch_config");
            return false;
        }
        try {
            Signal.handle(new Signal("HUP"), sig -> {
                Thread t = new Thread(action, "sluice-signal-HUP");
                t.setDaemon(true);
                t.start();
            });
            return true;
        } catch (IllegalArgumentException | UnsupportedOperationException e) {
            log.debug("signal HUP cannot be handled here ({}); no reload on SIGHUP", e.getMessage());
            return false;
        }
    }

    /**
     * True if signal {@code signo} was set to be ignored when this process started (Linux: the
     * {@code SigIgn} mask of /proc/self/status; false where that cannot be read).
     */
    static boolean ignoredAtStart(int signo) {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
                if (line.startsWith("SigIgn:")) {
                    long mask = Long.parseUnsignedLong(line.substring("SigIgn:".length()).trim(), 16);
                    return (mask & (1L << (signo - 1))) != 0;
                }
            }
        } catch (IOException | RuntimeException e) {
            log.debug("cannot read /proc/self/status: {}", e.toString());
        }
        return false;
    }

    /**
     * Runs {@code action} on SIGTERM and SIGINT. Returns false when SIGINT was ignored at start
     * (a background job of a non-interactive shell, {@code nohup ... &}): the JVM leaves it
     * ignored, so Ctrl-C cannot stop the gateway; a warning says so.
     */
    static boolean onTermination(Runnable action) {
        boolean intIgnored = ignoredAtStart(2);
        if (intIgnored) {
            log.warn("SIGINT is ignored by this process (started in the background?): Ctrl-C will not stop it;"
                    + " stop it with SIGTERM (kill {})", ProcessHandle.current().pid());
        }
        for (String name : new String[] {"TERM", "INT"}) {
            try {
                Signal.handle(new Signal(name), sig -> {
                    Thread t = new Thread(action, "sluice-signal-" + sig.getName());
                    t.start();
                });
            } catch (IllegalArgumentException | UnsupportedOperationException e) {
                log.debug("signal {} cannot be handled here ({}); the shutdown hook will drain instead", name, e.getMessage());
            }
        }
        return !intIgnored;
    }
}
