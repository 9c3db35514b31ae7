package io.sluice.server.route;

import io.sluice.core.config.MirrorPolicy;
import io.sluice.lb.ClusterBalancer;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One compiled mirror of a route: the shadow cluster, the exact fraction and the concurrency bound.
 * Thread-safe and lock-free; a reload compiles new targets (mirrors in flight finish on the old ones).
 */
public final class MirrorTarget {

    private static final long MILLION = 1_000_000;

    private final MirrorPolicy policy;
    private final ClusterBalancer cluster;
    private final long ppm;
    private final long timeoutNanos;
    private final AtomicLong seen = new AtomicLong();
    private final AtomicInteger inFlight = new AtomicInteger();

    MirrorTarget(MirrorPolicy policy, ClusterBalancer cluster) {
        this.policy = policy;
        this.cluster = cluster;
        this.ppm = policy.partsPerMillion();
        this.timeoutNanos = (policy.timeout() != null ? policy.timeout() : cluster.config().responseTimeout()).toNanos();
    }

    public MirrorPolicy policy() {
        return policy;
    }

    public ClusterBalancer cluster() {
        return cluster;
    }

    /** How long one mirror may take, connect to last response byte. */
    public long timeoutNanos() {
        return timeoutNanos;
    }

    /**
     * Whether the next request is mirrored: request {@code c} (counting from 0) is when
     * {@code floor((c + 1) × ppm / 10^6) > floor(c × ppm / 10^6)}, so every window of
     * {@code 10^6 / ppm} requests has exactly its share, evenly spread.
     */
    public boolean sample() {
        if (ppm >= MILLION) {
            return true;
        }
        long c = seen.getAndIncrement() % MILLION;
        return (c + 1) * ppm / MILLION > c * ppm / MILLION;
    }

    /** Takes a concurrency slot; false when {@code max_concurrent} mirrors are in flight (the mirror is dropped). */
    public boolean acquire() {
        while (true) {
            int n = inFlight.get();
            if (n >= policy.maxConcurrent()) {
                return false;
            }
            if (inFlight.compareAndSet(n, n + 1)) {
                return true;
            }
        }
    }

    /** Returns a slot taken by {@link #acquire()}. */
    public void release() {
        inFlight.decrementAndGet();
    }

    /** Mirrors in flight now. */
    public int inFlight() {
        return inFlight.get();
    }
}
