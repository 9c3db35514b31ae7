package io.sluice.server.channel;

import io.sluice.core.time.Cancellable;
import io.sluice.core.time.Scheduler;
import io.sluice.core.time.Ticker;

/**
 * One timer of one connection, on the listener's {@link Scheduler} for the connection's event loop
 * (the loop itself in production, a manual scheduler with a fake ticker in tests). Its owner keeps
 * its deadlines as plain {@code long}s and calls {@link #arm} with each; the timer keeps at most
 * one task scheduled, for the earliest deadline armed:
 * <ul>
 *   <li>a deadline at or after the one armed changes nothing (no allocation, no scheduling): when
 *       the timer fires, the owner's task looks at its deadlines, acts on what is due and arms
 *       the next one;</li>
 *   <li>a deadline before the one armed cancels and re-arms (rare with a {@code horizon}: arming
 *       never schedules further out than the horizon, so deadlines at least that far away never
 *       move it);</li>
 *   <li>the scheduled task is the timer itself: arming allocates no lambda.</li>
 * </ul>
 * So every deadline fires exactly when due on the scheduler's clock, and a request costs no
 * scheduling in the common case. Event loop only; no locks.
 */
public final class ConnectionTimer implements Runnable {

    private final Scheduler scheduler;
    private final Ticker ticker;
    private final Runnable onFire;
    private Cancellable task;
    private long due;

    /** @param onFire runs on the event loop when the timer fires (the timer is then unarmed) */
    public ConnectionTimer(Scheduler scheduler, Runnable onFire) {
        this.scheduler = scheduler;
        this.ticker = scheduler.ticker();
        this.onFire = onFire;
    }

    /** The scheduler's clock, in nanoseconds. */
    public long now() {
        return ticker.nanoTime();
    }

    /** Makes the timer fire at {@code deadline} (scheduler nanos) or earlier. */
    public void arm(long deadline) {
        arm(deadline, Long.MAX_VALUE);
    }

    /**
     * Makes the timer fire at {@code deadline} or earlier, but never schedules further than
     * {@code horizonNanos} from now (it then fires early and its owner re-arms for what is left).
     */
    public void arm(long deadline, long horizonNanos) {
        if (task != null) {
            if (deadline - due >= 0) {
                return; // the armed task fires earlier; its owner re-arms for what is left
            }
            task.cancel();
        }
        long now = ticker.nanoTime();
        long at = horizonNanos == Long.MAX_VALUE || deadline - (now + horizonNanos) < 0 ? deadline : now + horizonNanos;
        due = at;
        task = scheduler.schedule(this, at - now);
    }

    /** Arms for {@code delayNanos} from now (or earlier, if armed for earlier). */
    public void armIn(long delayNanos) {
        arm(ticker.nanoTime() + delayNanos);
    }

    /** Whether a task is scheduled. */
    public boolean isArmed() {
        return task != null;
    }

    /** When the scheduled task fires (meaningful only while {@link #isArmed}). */
    public long due() {
        return due;
    }

    /** Unschedules the task, if any. */
    public void cancel() {
        Cancellable t = task;
        if (t != null) {
            task = null;
            t.cancel();
        }
    }

    /** The scheduled task: not for callers. */
    @Override
    public void run() {
        task = null;
        onFire.run();
    }
}
