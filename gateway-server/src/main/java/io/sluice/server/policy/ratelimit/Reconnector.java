package io.sluice.server.policy.ratelimit;

import io.sluice.core.time.Cancellable;
import io.sluice.core.time.Scheduler;

/**
 * When to try connecting again: after a failure, {@code min}, then doubling per further failure up to
 * {@code max}; a success resets it to {@code min}. Attempts run on the injected {@link Scheduler}
 * (one at a time; a failure reported while one is scheduled changes nothing).
 */
final class Reconnector {

    private final Scheduler scheduler;
    private final long minNanos;
    private final long maxNanos;
    private final Runnable attempt;
    private long nextDelay;
    private Cancellable scheduled;
    private boolean closed;

    Reconnector(Scheduler scheduler, long minNanos, long maxNanos, Runnable attempt) {
        this.scheduler = scheduler;
        this.minNanos = minNanos;
        this.maxNanos = maxNanos;
        this.attempt = attempt;
        this.nextDelay = minNanos;
    }

    /** The connection failed or was lost: schedules the next attempt (unless one is pending). */
    synchronized void failed() {
        if (closed || scheduled != null) {
            return;
        }
        long delay = nextDelay;
        nextDelay = Math.min(maxNanos, delay > maxNanos / 2 ? maxNanos : delay * 2);
        scheduled = scheduler.schedule(this::run, delay);
    }

    private void run() {
        synchronized (this) {
            scheduled = null;
            if (closed) {
                return;
            }
        }
        attempt.run();
    }

    /** Connected: the next failure waits {@code min} again. */
    synchronized void succeeded() {
        nextDelay = minNanos;
    }

    /** The delay the next failure will wait. */
    synchronized long nextDelayNanos() {
        return nextDelay;
    }

    synchronized void close() {
        closed = true;
        if (scheduled != null) {
            scheduled.cancel();
            scheduled = null;
        }
    }
}
