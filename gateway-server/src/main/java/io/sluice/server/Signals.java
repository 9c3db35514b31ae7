package io.sluice.server;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs an action on SIGTERM and SIGINT instead of the JVM's default exit, so the gateway can drain
 * and then exit with status 0 (a shutdown hook alone would make the process exit with 143/130).
 */
final class Signals {

    private static final Logger log = LoggerFactory.getLogger(Signals.class);

    private Signals() {
    }

    static void onTermination(Runnable action) {
        for (String name : new String[] {"TERM", "INT"}) {
            try {
                sun.misc.Signal.handle(new sun.misc.Signal(name), sig -> {
                    Thread t = new Thread(action, "sluice-signal-" + sig.getName());
                    t.start();
                });
            } catch (IllegalArgumentException | UnsupportedOperationException e) {
                log.debug("signal {} cannot be handled here ({}); the shutdown hook will drain instead", name, e.getMessage());
            }
        }
    }
}
