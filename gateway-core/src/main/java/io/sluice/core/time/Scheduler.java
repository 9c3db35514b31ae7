package io.sluice.core.time;

import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Runs tasks later, on a time base given by {@link #ticker()}. In production it adapts a Netty
 * event loop; in tests a manual scheduler advances a fake ticker and runs due tasks in order.
 */
public interface Scheduler {

    /** The clock this scheduler's delays are measured against. */
    Ticker ticker();

    /** Runs {@code task} once, {@code delayNanos} from now (0 or less = as soon as possible). */
    Cancellable schedule(Runnable task, long delayNanos);

    /**
     * Runs {@code task} after {@code initialDelayNanos}, then again {@code delayNanos} after each run
     * finished. Cancelling the returned handle stops future runs.
     */
    default Cancellable scheduleWithFixedDelay(Runnable task, long initialDelayNanos, long delayNanos) {
        if (delayNanos <= 0) {
            throw new IllegalArgumentException("delayNanos must be > 0: " + delayNanos);
        }
        AtomicReference<Cancellable> next = new AtomicReference<>();
        Runnable[] loop = new Runnable[1];
        AtomicBoolean cancelled = new AtomicBoolean();
        loop[0] = () -> {
            if (cancelled.get()) {
                return;
            }
            try {
                task.run();
            } finally {
                if (!cancelled.get()) {
                    next.set(schedule(loop[0], delayNanos));
                }
            }
        };
        next.set(schedule(loop[0], initialDelayNanos));
        return () -> {
            if (!cancelled.compareAndSet(false, true)) {
                return false;
            }
            Cancellable c = next.get();
            return c == null || c.cancel();
        };
    }
}
