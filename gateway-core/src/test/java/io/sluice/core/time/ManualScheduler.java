package io.sluice.core.time;

import java.time.Duration;
import java.util.PriorityQueue;

/**
 * A fake clock and scheduler for tests: time moves only when {@link #advance(Duration)} is called,
 * which runs every task that falls due, in time order (FIFO for equal times), with the clock set to
 * each task's due time while it runs. Not thread-safe; tests drive it from one thread.
 */
public final class ManualScheduler implements Scheduler, Ticker {

    private final PriorityQueue<Task> queue = new PriorityQueue<>();
    private long now;
    private long seq;

    public ManualScheduler() {
        this(0);
    }

    public ManualScheduler(long startNanos) {
        this.now = startNanos;
    }

    @Override
    public Ticker ticker() {
        return this;
    }

    @Override
    public long nanoTime() {
        return now;
    }

    @Override
    public Cancellable schedule(Runnable task, long delayNanos) {
        Task t = new Task(now + Math.max(0, delayNanos), seq++, task);
        queue.add(t);
        return () -> !t.done && queue.remove(t);
    }

    /** Moves the clock forward by {@code d}, running due tasks (including ones they schedule) on the way. */
    public void advance(Duration d) {
        advanceNanos(d.toNanos());
    }

    public void advanceNanos(long nanos) {
        long target = now + nanos;
        while (!queue.isEmpty() && queue.peek().due <= target) {
            Task t = queue.poll();
            now = Math.max(now, t.due);
            t.done = true;
            t.task.run();
        }
        now = target;
    }

    /** Runs tasks that are due now without moving the clock. */
    public void runDue() {
        advanceNanos(0);
    }

    public int pendingTasks() {
        return queue.size();
    }

    private static final class Task implements Comparable<Task> {
        final long due;
        final long seq;
        final Runnable task;
        boolean done;

        Task(long due, long seq, Runnable task) {
            this.due = due;
            this.seq = seq;
            this.task = task;
        }

        @Override
        public int compareTo(Task o) {
            int c = Long.compare(due, o.due);
            return c != 0 ? c : Long.compare(seq, o.seq);
        }
    }
}
