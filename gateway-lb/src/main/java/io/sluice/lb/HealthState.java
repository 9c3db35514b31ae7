package io.sluice.lb;

import io.sluice.core.cluster.HealthStatus;

/**
 * The pure active-health state machine of one host: consecutive counters that move
 * only in the opposite state and reset on the other outcome.
 * <ul>
 *   <li>{@code UNKNOWN} (never checked) counts as healthy: the first success makes it {@code HEALTHY}
 *       at once; {@code unhealthyThreshold} failures in a row make it {@code UNHEALTHY};</li>
 *   <li>{@code HEALTHY} → {@code UNHEALTHY} after {@code unhealthyThreshold} consecutive failures;</li>
 *   <li>{@code UNHEALTHY} → {@code HEALTHY} after {@code healthyThreshold} consecutive successes.</li>
 * </ul>
 * Not thread-safe; the checker serializes access.
 */
final class HealthState {

    private final int healthyThreshold;
    private final int unhealthyThreshold;
    private HealthStatus status;
    private int successes;
    private int failures;

    HealthState(HealthStatus initial, int healthyThreshold, int unhealthyThreshold) {
        this.status = initial == null ? HealthStatus.UNKNOWN : initial;
        this.healthyThreshold = healthyThreshold;
        this.unhealthyThreshold = unhealthyThreshold;
    }

    HealthStatus status() {
        return status;
    }

    /** Records one probe result; returns the new status if it changed, otherwise null. */
    HealthStatus record(boolean success) {
        if (success) {
            failures = 0;
            if (status == HealthStatus.UNHEALTHY) {
                if (++successes >= healthyThreshold) {
                    successes = 0;
                    return status = HealthStatus.HEALTHY;
                }
                return null;
            }
            if (status == HealthStatus.UNKNOWN) {
                return status = HealthStatus.HEALTHY;
            }
            return null;
        }
        successes = 0;
        if (status != HealthStatus.UNHEALTHY && ++failures >= unhealthyThreshold) {
            failures = 0;
            return status = HealthStatus.UNHEALTHY;
        }
        return null;
    }
}
