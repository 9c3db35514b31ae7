package io.sluice.server.policy.ratelimit;

import io.sluice.core.time.Ticker;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.TimeUnit;

/**
 * A global bucket's local view: tokens leased from Redis in batches of {@code leaseSize} and spent
 * here with a CAS each, so most requests decide without I/O. When the remainder falls to half a
 * batch the next lease is requested in the background (one at a time). Never waits:
 * <ul>
 *   <li>tokens left → allowed;</li>
 *   <li>Redis down, or no lease yet for this key while the first is in flight → the failure mode
 *       ({@link #FAIL_OPEN}, or limited for {@code failure_mode_deny});</li>
 *   <li>Redis said the bucket is empty → limited until its next refill, without asking again (also
 *       while Redis is down: that answer stays true);</li>
 *   <li>remainder spent while a lease is in flight → on credit, when the last lease came back whole
 *       (Redis had room) and the rule is large: up to {@link #credit} requests are admitted and the
 *       debt is paid from the lease when it arrives; otherwise limited (the known remainder decides).
 *       Without credit a rule far above the traffic refused requests whenever Redis answered slower than
 *       half a batch lasted, and at every refill (when unspent tokens are dropped).</li>
 * </ul>
 * Leased tokens are valid until the bucket's next refill in Redis (then dropped), so a fleet admits
 * at most what the Redis bucket hands out, plus the first-lease fail-open requests; unspent leased
 * tokens (at most {@code N × leaseSize} per refill) are lost, never over-admitted.
 */
final class LeasedBucket implements Limiter, LeaseClient.Callback {

    private static final VarHandle REMAINING;
    private static final VarHandle IN_FLIGHT;

    static {
        try {
            MethodHandles.Lookup l = MethodHandles.lookup();
            REMAINING = l.findVarHandle(LeasedBucket.class, "remaining", long.class);
            IN_FLIGHT = l.findVarHandle(LeasedBucket.class, "inFlight", boolean.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** Retry-After of a request refused for lack of an answer from Redis (deny mode, or lease in flight). */
    static final long UNKNOWN_WAIT_NANOS = TimeUnit.SECONDS.toNanos(1);

    private final LeaseClient client;
    private final Ticker ticker;
    private final String key;
    private final long maxTokens;
    private final long tokensPerFill;
    private final long fillMillis;
    private final int leaseSize;
    private final boolean failDeny;
    /**
     * Requests that may be admitted on credit while a lease is in flight: {@code min(leaseSize, 1 % of
     * max_tokens)}, 0 under {@code failure_mode_deny}. A fleet thus over-admits at most this many per
     * gateway when the Redis bucket empties between two leases: nothing for small rules (a tenant at
     * 10 requests per second stays exact), at most 1 % of the bucket for large ones.
     */
    private final long credit;
    /** The last lease came back whole: Redis had at least a batch left (credit is given only then). */
    private volatile boolean lastWhole;
    @SuppressWarnings("unused")
    private volatile long remaining;
    @SuppressWarnings("unused")
    private volatile boolean inFlight;
    private volatile boolean everLeased;
    /** Ticker time of the bucket's next refill in Redis: leased tokens not spent by then are dropped. */
    private volatile long leaseValidUntil;
    /** Ticker time until which Redis said the bucket is empty (0 = not known empty). */
    private volatile long emptyUntil;
    private volatile long lastUsed;

    LeasedBucket(LeaseClient client, Ticker ticker, String key, long maxTokens, long tokensPerFill, long fillMillis,
                 int leaseSize, boolean failDeny, long now) {
        this.client = client;
        this.ticker = ticker;
        this.key = key;
        this.maxTokens = maxTokens;
        this.tokensPerFill = tokensPerFill;
        this.fillMillis = fillMillis;
        this.leaseSize = leaseSize;
        this.failDeny = failDeny;
        this.credit = failDeny ? 0 : Math.min(leaseSize, maxTokens / 100);
        this.lastUsed = now;
    }

    @Override
    public long acquire(long now) {
        if (now - lastUsed > 1_000_000) {
            lastUsed = now;
        }
        while (true) {
            long r = (long) REMAINING.getVolatile(this);
            if (r <= 0) {
                break;
            }
            if (now - leaseValidUntil >= 0) {
                // the lease's period ended: its leftovers would add to the next refill and let a burst
                // exceed max_tokens across the fleet; drop them (under-admission is the safe side)
                REMAINING.compareAndSet(this, r, 0L);
                continue;
            }
            if (REMAINING.compareAndSet(this, r, r - 1)) {
                if (r - 1 <= leaseSize / 2) {
                    maybeLease();
                }
                return ALLOWED;
            }
        }
        long until = emptyUntil;
        if (until != 0 && now - until < 0) {
            return until - now; // Redis said empty until its next refill: true whether or not it answers now
        }
        if (!client.up()) {
            return failDeny ? UNKNOWN_WAIT_NANOS : FAIL_OPEN;
        }
        maybeLease();
        if (!everLeased) {
            return failDeny ? UNKNOWN_WAIT_NANOS : FAIL_OPEN;
        }
        if (credit > 0 && lastWhole && (boolean) IN_FLIGHT.getVolatile(this)) {
            while (true) { // on credit against the lease in flight (paid from its grant)
                long r = (long) REMAINING.getVolatile(this);
                if (r <= -credit) {
                    break;
                }
                if (REMAINING.compareAndSet(this, r, r - 1)) {
                    return ALLOWED;
                }
            }
        }
        return UNKNOWN_WAIT_NANOS;
    }

    private void maybeLease() {
        if (IN_FLIGHT.compareAndSet(this, false, true)) {
            client.lease(key, maxTokens, tokensPerFill, fillMillis, leaseSize, this);
        }
    }

    @Override
    public void granted(long tokens, long millisUntilFill) {
        everLeased = true;
        lastWhole = tokens >= leaseSize;
        if (tokens > 0) { // (a debt taken on credit is paid from these first)
            leaseValidUntil = ticker.nanoTime() + TimeUnit.MILLISECONDS.toNanos(Math.max(1, millisUntilFill));
            REMAINING.getAndAdd(this, tokens);
            emptyUntil = 0;
        } else {
            long until = ticker.nanoTime() + TimeUnit.MILLISECONDS.toNanos(Math.max(1, millisUntilFill));
            emptyUntil = until == 0 ? 1 : until;
        }
        IN_FLIGHT.setVolatile(this, false);
    }

    @Override
    public void failed() {
        IN_FLIGHT.setVolatile(this, false);
    }

    /** Leased tokens not yet spent. */
    long remaining() {
        return (long) REMAINING.getVolatile(this);
    }

    @Override
    public boolean idle(long now, long idleBefore) {
        return lastUsed - idleBefore < 0 && !inFlight;
    }

    @Override
    public long lastUsed() {
        return lastUsed;
    }
}
