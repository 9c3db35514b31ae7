package io.sluice.core.time;

/** A handle on a scheduled task. */
@FunctionalInterface
public interface Cancellable {

    /** Cancels the task if it has not run yet; returns {@code false} if it already ran or was cancelled. */
    boolean cancel();

    Cancellable NOOP = () -> false;
}
