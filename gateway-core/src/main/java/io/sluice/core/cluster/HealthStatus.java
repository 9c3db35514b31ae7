package io.sluice.core.cluster;

/** Active health-check verdict of a host. {@code UNKNOWN} (never checked, or no check configured) counts as healthy. */
public enum HealthStatus {
    UNKNOWN,
    HEALTHY,
    UNHEALTHY
}
