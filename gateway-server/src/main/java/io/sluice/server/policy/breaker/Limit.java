package io.sluice.server.policy.breaker;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One concurrency limit of a circuit breaker: a shared counter checked against a maximum. Taking
 * a slot is one atomic increment and a compare (no allocation, no lock); the maximum is volatile
 * so a reload changes it in place while requests hold slots. The breaker is "open" from the first
 * refusal until the count falls back below 90 % of the limit (the hysteresis keeps a breaker at
 * its limit from logging on every request); each change logs one line.
 */
public final class Limit {

    private static final Logger log = LoggerFactory.getLogger(Limit.class);

    private final String cluster;
    private final String resource;
    private final AtomicInteger count = new AtomicInteger();
    private final AtomicLong overflows = new AtomicLong();
    private volatile int max;
    private volatile boolean open;

    Limit(String cluster, String resource, int max) {
        this.cluster = cluster;
        this.resource = resource;
        this.max = max;
    }

    /** Takes a slot if one is free; false (counted as an overflow) when at the limit. */
    public boolean tryAcquire() {
        return tryAcquire(max);
    }

    /** Takes a slot if fewer than {@code limit} are taken. */
    boolean tryAcquire(int limit) {
        int n = count.incrementAndGet();
        if (n <= limit) {
            return true;
        }
        count.decrementAndGet();
        overflows.incrementAndGet();
        if (!open) {
            opened(limit);
        }
        return false;
    }

    /** Gives a slot back. */
    public void release() {
        int n = count.decrementAndGet();
        if (open && n < max - max / 10) {
            closed();
        }
    }

    private synchronized void opened(int limit) {
        if (!open) {
            open = true;
            log.warn("circuit breaker opened: cluster {} {} at its limit of {}; excess requests fail fast",
                    cluster, resource, limit);
        }
    }

    private synchronized void closed() {
        if (open) {
            open = false;
            log.info("circuit breaker closed: cluster {} {} below its limit again ({} of {})", cluster, resource,
                    count.get(), max);
        }
    }

    void max(int newMax) {
        this.max = newMax;
    }

    public int max() {
        return max;
    }

    /** Slots taken now. */
    public int count() {
        return count.get();
    }

    /** Slots free now (never negative). */
    public int remaining() {
        return Math.max(0, max - count.get());
    }

    /** Whether the limit refused something and has not recovered since. */
    public boolean open() {
        return open;
    }

    /** Requests refused so far. */
    public long overflows() {
        return overflows.get();
    }

    public String resource() {
        return resource;
    }
}
