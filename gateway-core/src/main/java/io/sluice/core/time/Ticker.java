package io.sluice.core.time;

/**
 * The only source of monotonic time in Sluice. Production code receives one (usually
 * {@link #system()}); tests pass a manual ticker and advance it by hand.
 */
@FunctionalInterface
public interface Ticker {

    /** Monotonic nanoseconds, comparable only with other readings of the same ticker. */
    long nanoTime();

    /** The JVM's monotonic clock. */
    static Ticker system() {
        return SystemTicker.INSTANCE;
    }
}
