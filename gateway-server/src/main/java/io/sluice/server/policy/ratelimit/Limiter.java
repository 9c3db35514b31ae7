package io.sluice.server.policy.ratelimit;

/**
 * One bucket's decision for one request. Implementations are safe to call from every event loop
 * at once, without locks (CAS loops).
 */
interface Limiter {

    /** The request may pass: a token was taken. */
    long ALLOWED = -1;
    /** The request may pass although the budget could not be checked (global rule, Redis unavailable). */
    long FAIL_OPEN = -2;

    /**
     * Takes one token at ticker time {@code now}: {@link #ALLOWED}, {@link #FAIL_OPEN}, or (>= 0)
     * the nanoseconds until a token may be available (the request is limited).
     */
    long acquire(long now);

    /** Whether the bucket may be dropped at {@code now}: unused since {@code idleBefore} and full (so dropping loses nothing). */
    boolean idle(long now, long idleBefore);

    /** The ticker time of the last {@link #acquire}. */
    long lastUsed();
}
