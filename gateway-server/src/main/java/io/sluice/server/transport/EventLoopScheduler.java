package io.sluice.server.transport;

import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.ScheduledFuture;
import io.sluice.core.time.Cancellable;
import io.sluice.core.time.Scheduler;
import io.sluice.core.time.Ticker;

import java.util.concurrent.TimeUnit;

/** The core {@link Scheduler} on a Netty event executor (production); tests use a manual scheduler instead. */
public final class EventLoopScheduler implements Scheduler {

    private final EventExecutor executor;
    private final Ticker ticker;

    public EventLoopScheduler(EventExecutor executor, Ticker ticker) {
        this.executor = executor;
        this.ticker = ticker;
    }

    @Override
    public Ticker ticker() {
        return ticker;
    }

    @Override
    public Cancellable schedule(Runnable task, long delayNanos) {
        if (executor.isShuttingDown()) {
            return Cancellable.NOOP;
        }
        ScheduledFuture<?> f = executor.schedule(task, Math.max(0, delayNanos), TimeUnit.NANOSECONDS);
        return () -> f.cancel(false);
    }
}
