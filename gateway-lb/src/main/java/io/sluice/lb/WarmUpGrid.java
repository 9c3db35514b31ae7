package io.sluice.lb;

/**
 * The coarse clock of slow start: an epoch that the cluster's warm-up task advances every
 * {@link #stepNanos grid step} while a host warms up. A picker caches each host's effective weight
 * and recomputes it (at the exact current time) only when the epoch has moved since — so a pick
 * neither reads the clock nor evaluates the factor (a division, a {@code pow}) on every re-queue,
 * and the factor lags the exact curve by at most one step.
 */
final class WarmUpGrid {

    private static final long MIN_STEP = 10_000_000L; // 10 ms
    private static final long MAX_STEP = 1_000_000_000L; // 1 s

    private volatile int epoch;

    int epoch() {
        return epoch;
    }

    /** Called by the warm-up task only (one writer). */
    @SuppressWarnings("NonAtomicOperationOnVolatileField")
    void advance() {
        epoch = epoch + 1;
    }

    /** The refresh step of a window: a thousandth of it, within [10 ms, 1 s], never above the window. */
    static long stepNanos(long windowNanos) {
        long step = Math.max(MIN_STEP, Math.min(MAX_STEP, windowNanos / 1000));
        return Math.max(1, Math.min(step, windowNanos));
    }
}
