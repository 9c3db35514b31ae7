package io.sluice.core.cluster;

import io.sluice.core.config.HostConfig;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * The runtime state of one upstream address in one cluster: its configured weight, its health as
 * decided by active checks, passive ejection, the slow-start clock, and the number of requests
 * in flight. Written by the health checker / outlier detector, read by the load balancer on every
 * pick and by the admin API. Identity across reloads is {@link #address()}.
 */
public final class Host {

    /** Sentinel for "no warm-up in progress" in {@link #warmStartNanos()}. */
    public static final long NOT_WARMING = Long.MIN_VALUE;

    private final String host;
    private final int port;
    private final String address;
    private volatile int weight;

    private volatile HealthStatus health = HealthStatus.UNKNOWN;
    private volatile long ejectedUntilNanos;
    private volatile boolean ejected;
    private volatile long warmStartNanos = NOT_WARMING;
    /** Where the host came from: null = the config file, else a discovery source ("zookeeper", ...). */
    private volatile String origin;
    /** The host's own start time from its source (epoch ms), 0 = unknown. */
    private volatile long startMillis;
    /** discovery: the host's own warm-up (window, start fraction) from its source; null = the cluster's slow_start. */
    private volatile WarmUp warmUp;
    private final AtomicInteger activeRequests = new AtomicInteger();

    /**
     * A warm-up a discovery source gave this host (SOFARPC {@code warmupTime} / {@code warmupWeight}):
     * it replaces the cluster's {@code slow_start} window and floor for this host; the curve
     * (aggression) stays the cluster's.
     *
     * @param windowNanos length of the warm-up from T0, > 0
     * @param floor       the factor the warm-up starts at ({@code warmupWeight / weight}) in [0, 1]; NaN = the
     *                    cluster's {@code min_weight}
     * @param weight      the warm-up weight as the source gave it (for the admin API), -1 = none
     */
    public record WarmUp(long windowNanos, double floor, int weight) {
        public WarmUp {
            if (windowNanos <= 0) {
                throw new IllegalArgumentException("warm-up window " + windowNanos + " ns is not > 0");
            }
            if (!Double.isNaN(floor)) {
                floor = Math.max(0, Math.min(1, floor));
            }
        }

        /** True when the floor comes from the source (not the cluster's min_weight). */
        public boolean ownFloor() {
            return !Double.isNaN(floor);
        }
    }

    public Host(HostConfig config) {
        this.host = config.host();
        this.port = config.port();
        this.address = config.address();
        this.weight = config.weight();
    }

    public String host() {
        return host;
    }

    public int port() {
        return port;
    }

    /** {@code host:port}. */
    public String address() {
        return address;
    }

    /** The configured weight (not clamped, no factor applied). */
    public int weight() {
        return weight;
    }

    /** A reload may change a kept host's weight without resetting its health or warm-up clock. */
    public void weight(int newWeight) {
        this.weight = newWeight;
    }

    public HealthStatus health() {
        return health;
    }

    public void health(HealthStatus status) {
        this.health = status;
    }

    /** True while passive outlier detection holds this host out. */
    public boolean ejected() {
        return ejected;
    }

    public long ejectedUntilNanos() {
        return ejectedUntilNanos;
    }

    public void eject(long untilNanos) {
        this.ejectedUntilNanos = untilNanos;
        this.ejected = true;
    }

    public void uneject() {
        this.ejected = false;
        this.ejectedUntilNanos = 0;
    }

    /** True if the load balancer may send traffic here: not failed by active checks and not ejected. */
    public boolean available() {
        return health != HealthStatus.UNHEALTHY && !ejected;
    }

    /** T0 of the current warm-up, or {@link #NOT_WARMING}. */
    public long warmStartNanos() {
        return warmStartNanos;
    }

    public void warmStartNanos(long t0) {
        this.warmStartNanos = t0;
    }

    /** Where the host came from: {@code config}, or the discovery source that listed it. */
    public String origin() {
        String o = origin;
        return o == null ? "config" : o;
    }

    /** True when a discovery source (not the config file) listed this host. */
    public boolean discovered() {
        return origin != null;
    }

    /** The host's start time as its source reported it (epoch ms), 0 = unknown. */
    public long startMillis() {
        return startMillis;
    }

    /** Marks the host as listed by a discovery source with the given start time. */
    public void discovered(String source, long startMillis) {
        this.origin = source;
        this.startMillis = startMillis;
    }

    /** discovery: the host's own warm-up, or null (the cluster's slow_start applies). */
    public WarmUp warmUp() {
        return warmUp;
    }

    public void warmUp(WarmUp w) {
        this.warmUp = w;
    }

    public int activeRequests() {
        return activeRequests.get();
    }

    public void requestStarted() {
        activeRequests.incrementAndGet();
    }

    public void requestFinished() {
        activeRequests.decrementAndGet();
    }

    @Override
    public String toString() {
        return address + "(w=" + weight + ", " + health + (ejected ? ", ejected" : "") + ")";
    }
}
