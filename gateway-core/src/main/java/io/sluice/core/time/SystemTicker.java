package io.sluice.core.time;

/** {@link System#nanoTime()}; the one place outside tests that reads the JVM clock. */
enum SystemTicker implements Ticker {
    INSTANCE;

    @Override
    public long nanoTime() {
        return System.nanoTime();
    }
}
