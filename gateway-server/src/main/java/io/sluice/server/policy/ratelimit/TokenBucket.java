package io.sluice.server.policy.ratelimit;

/**
 * A token bucket in one {@code AtomicLong}-style CAS word: capacity {@code maxTokens} (also the
 * initial fill), {@code tokensPerFill} tokens added at the end of every {@code fillNanos} period
 * counted from the bucket's creation. Refill is lazy: a request reads the state, adds the tokens
 * of the periods passed since the last update, and takes one — all in a single compare-and-set,
 * so the count is exact across any number of threads and nothing runs between requests.
 *
 * <p>State: {@code period << 24 | tokens}, where {@code period} is the number of whole fill periods
 * since creation at the last update and {@code tokens} what was left then (24 bits, so at most
 * {@value io.sluice.core.config.RateLimitRule#MAX_TOKENS} tokens; periods up to 2^40, i.e. 34 years
 * of 1 ms fills).
 */
final class TokenBucket implements Limiter {

    private static final int TOKEN_BITS = 24;
    private static final long TOKEN_MASK = (1L << TOKEN_BITS) - 1;
    private static final java.lang.invoke.VarHandle STATE;
    private static final java.lang.invoke.VarHandle LAST_USED;

    static {
        try {
            java.lang.invoke.MethodHandles.Lookup l = java.lang.invoke.MethodHandles.lookup();
            STATE = l.findVarHandle(TokenBucket.class, "state", long.class);
            LAST_USED = l.findVarHandle(TokenBucket.class, "lastUsed", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private static final long TOUCH_NANOS = 1_000_000;

    private final long maxTokens;
    private final long tokensPerFill;
    private final long fillNanos;
    private final long epoch;
    /** Periods after which an empty bucket is full again: more periods than this just fill it. */
    private final long periodsToFull;
    @SuppressWarnings("unused") // via STATE
    private volatile long state;
    @SuppressWarnings("unused") // via LAST_USED
    private volatile long lastUsed;

    TokenBucket(long maxTokens, long tokensPerFill, long fillNanos, long now) {
        this.maxTokens = maxTokens;
        this.tokensPerFill = tokensPerFill;
        this.fillNanos = fillNanos;
        this.epoch = now;
        this.periodsToFull = (maxTokens + tokensPerFill - 1) / tokensPerFill;
        this.state = maxTokens; // period 0, full
        this.lastUsed = now;
    }

    @Override
    public long acquire(long now) {
        long period = -1;
        while (true) {
            long s = (long) STATE.getVolatile(this);
            long p = s >>> TOKEN_BITS;
            long tokens = s & TOKEN_MASK;
            if (period < 0) {
                // still in the state's period (the common case under load): a multiply, no division
                long elapsed = now - epoch;
                period = elapsed < (p + 1) * fillNanos ? p : elapsed / fillNanos;
            }
            if (period > p) {
                long passed = period - p;
                tokens = passed >= periodsToFull ? maxTokens : Math.min(maxTokens, tokens + passed * tokensPerFill);
            } else {
                period = p; // a reader with an older clock reading never moves the period back
            }
            if (tokens == 0) {
                touch(now);
                return Math.max(0, epoch + (period + 1) * fillNanos - now);
            }
            if (STATE.compareAndSet(this, s, period << TOKEN_BITS | (tokens - 1))) {
                touch(now);
                return ALLOWED;
            }
        }
    }

    /** Records use for expiry, at most once a millisecond (no write to a shared line per request). */
    private void touch(long now) {
        if (now - (long) LAST_USED.getOpaque(this) > TOUCH_NANOS) {
            LAST_USED.setOpaque(this, now);
        }
    }

    /** Tokens left at {@code now} (after the lazy refill; reads only). */
    long available(long now) {
        long s = (long) STATE.getVolatile(this);
        long p = s >>> TOKEN_BITS;
        long tokens = s & TOKEN_MASK;
        long elapsed = now - epoch;
        long period = elapsed <= 0 ? 0 : elapsed / fillNanos;
        if (period > p) {
            long passed = period - p;
            tokens = passed >= periodsToFull ? maxTokens : Math.min(maxTokens, tokens + passed * tokensPerFill);
        }
        return tokens;
    }

    long maxTokens() {
        return maxTokens;
    }

    @Override
    public boolean idle(long now, long idleBefore) {
        return (long) LAST_USED.getOpaque(this) - idleBefore < 0 && available(now) == maxTokens;
    }

    @Override
    public long lastUsed() {
        return (long) LAST_USED.getOpaque(this);
    }
}
