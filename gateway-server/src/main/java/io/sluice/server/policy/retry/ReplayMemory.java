package io.sluice.server.policy.retry;

import java.util.concurrent.atomic.AtomicLong;

/**
 * The bound on request-body bytes held for replay by all requests of this process together
 * (default 64 MiB; each request is also bounded by its policy's {@code max_body_bytes}). A request
 * that cannot reserve its bytes is not retried (counted as {@code body_too_large}).
 */
public final class ReplayMemory {

    /** The process-wide instance. */
    public static final ReplayMemory SHARED = new ReplayMemory(64L * 1024 * 1024);

    private final AtomicLong used = new AtomicLong();
    private volatile long limit;

    public ReplayMemory(long limit) {
        this.limit = limit;
    }

    /** Reserves {@code bytes}; false when that would exceed the limit. */
    public boolean tryReserve(long bytes) {
        long n = used.addAndGet(bytes);
        if (n <= limit) {
            return true;
        }
        used.addAndGet(-bytes);
        return false;
    }

    public void free(long bytes) {
        if (bytes != 0) {
            used.addAndGet(-bytes);
        }
    }

    public long used() {
        return used.get();
    }

    public long limit() {
        return limit;
    }

    public void limit(long newLimit) {
        this.limit = newLimit;
    }
}
