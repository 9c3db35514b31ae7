package io.sluice.server.policy.retry;

import io.netty.buffer.ByteBuf;
import io.sluice.core.cluster.Host;
import io.sluice.core.time.Cancellable;
import io.sluice.lb.ClusterBalancer;
import io.sluice.server.policy.ClusterPolicies;

import java.util.ArrayDeque;

/**
 * The retry side of one exchange: its policy, the attempt number, the hosts already tried, the
 * request body kept for replay and the retry-budget slot it holds. A downstream connection owns
 * one instance and reuses it for every exchange ({@link #begin} … {@link #end}), so an exchange
 * whose policy never triggers allocates nothing here. Event loop only.
 *
 * <p>Buffer ownership: {@link #keep} stores a retained duplicate of each body piece (the caller
 * still owns and forwards the original); {@link #end} and {@link #abandon} release them.
 */
public final class RetryState {

    private final ReplayMemory memory;
    private RetryPolicy policy;
    private ClusterPolicies cluster;
    /** 1 on the first try, +1 per retry. */
    private int attempt = 1;
    private final Host[] tried = new Host[11];
    private int triedCount;
    private final ArrayDeque<ByteBuf> replay = new ArrayDeque<>(4);
    private long replayBytes;
    private boolean abandoned;
    private boolean holdsRetrySlot;
    private boolean pickOverflowed;
    /** The scheduled back-off of the next attempt, or null. */
    public Cancellable backoff;

    public RetryState() {
        this(ReplayMemory.SHARED);
    }

    public RetryState(ReplayMemory memory) {
        this.memory = memory;
    }

    /** Starts an exchange on a route with {@code policy} (null: no retries) to {@code cluster}. */
    public void begin(RetryPolicy policy, ClusterPolicies cluster) {
        this.policy = policy;
        this.cluster = cluster;
        this.attempt = 1;
        this.triedCount = 0;
        this.abandoned = false;
    }

    public RetryPolicy policy() {
        return policy;
    }

    /** Whether the exchange may still be retried at all (a policy, and its body fits the buffer). */
    public boolean active() {
        return policy != null && !abandoned;
    }

    public int attempt() {
        return attempt;
    }

    public Host[] tried() {
        return tried;
    }

    public int triedCount() {
        return triedCount;
    }

    /** How often the picker looks for a host not tried yet and below its per-host limit. */
    static final int PICK_ATTEMPTS = 5;

    /**
     * Picks the host of the next attempt: up to {@value #PICK_ATTEMPTS} picks for one not tried yet
     * and below the cluster's {@code max_host_requests}; else the last one below its limit, even if
     * tried. Null: no healthy host, or every host picked was at its limit ({@link #pickOverflowed}).
     * The common case (no per-host limit, first attempt) is one pick. No allocation.
     */
    public Host pick(ClusterBalancer c) {
        return pick(c, io.sluice.lb.Hashing.NO_KEY);
    }

    /**
     * {@link #pick(ClusterBalancer)} for a request with a hash key (ring_hash/maglev,
     * docs/traffic.md): the first attempt goes to the key's host; a retry looks for another host.
     */
    public Host pick(ClusterBalancer c, long key) {
        pickOverflowed = false;
        int perHost = cluster.breaker().config().maxHostRequests();
        Host chosen;
        if (perHost == 0 && triedCount == 0) {
            chosen = key == io.sluice.lb.Hashing.NO_KEY ? c.pick() : c.pick(key);
        } else {
            chosen = null;
            Host fallback = null;
            boolean any = false;
            for (int i = 0; i < PICK_ATTEMPTS && chosen == null; i++) {
                Host h = i == 0 && triedCount == 0 && key != io.sluice.lb.Hashing.NO_KEY ? c.pick(key) : c.pick();
                if (h == null) {
                    break;
                }
                any = true;
                if (perHost != 0 && h.activeRequests() >= perHost) {
                    continue;
                }
                if (contains(h)) {
                    fallback = h;
                } else {
                    chosen = h;
                }
            }
            if (chosen == null) {
                chosen = fallback;
                if (fallback == null && any) {
                    pickOverflowed = true;
                    cluster.hostOverflow.increment();
                }
            }
        }
        if (chosen != null && policy != null && triedCount < tried.length) {
            tried[triedCount++] = chosen;
        }
        return chosen;
    }

    /** Counts {@code h} as tried (a host an earlier attempt used), so {@link #pick} avoids it. */
    public void exclude(Host h) {
        if (h != null && triedCount < tried.length) {
            tried[triedCount++] = h;
        }
    }

    /** Whether the last {@link #pick} found only hosts at their per-host limit. */
    public boolean pickOverflowed() {
        return pickOverflowed;
    }

    private boolean contains(Host h) {
        for (int i = 0; i < triedCount; i++) {
            if (tried[i] == h) {
                return true;
            }
        }
        return false;
    }

    /**
     * Keeps a piece of the request body for replay (a retained duplicate; the caller keeps its own
     * reference). Past the policy's {@code max_body_bytes} or the process-wide bound, retries are
     * abandoned for this exchange and what was kept is released.
     */
    public void keep(ByteBuf content) {
        if (policy == null || abandoned) {
            return;
        }
        int n = content.readableBytes();
        if (n == 0) {
            return;
        }
        if (replayBytes + n > policy.maxBodyBytes() || !memory.tryReserve(n)) {
            abandon();
            return;
        }
        replayBytes += n;
        replay.add(content.retainedDuplicate());
    }

    /** Gives up retrying this exchange because of its body size (counted). */
    private void abandon() {
        abandoned = true;
        cluster.bodyTooLarge.increment();
        releaseReplay();
    }

    /** Whether any body was kept. */
    public boolean hasReplay() {
        return !replay.isEmpty();
    }

    /**
     * Calls {@code sink} with a retained duplicate of every kept body piece in order (the sink
     * takes ownership of each, e.g. by writing it).
     */
    public void replay(java.util.function.Consumer<ByteBuf> sink) {
        for (ByteBuf b : replay) {
            sink.accept(b.retainedDuplicate());
        }
    }

    /**
     * The budget check before a retry: false when the attempts are used up (counted as limit
     * exceeded) or the budget refuses (counted as overflow). On true the retry is counted, the
     * attempt number advances and the exchange holds a retry slot until its next attempt ends.
     */
    public boolean tryRetry() {
        if (attempt > policy.numRetries()) {
            cluster.retryLimitExceeded.increment();
            return false;
        }
        releaseRetrySlot();
        if (!cluster.breaker().tryRetry()) {
            cluster.retryOverflow.increment();
            return false;
        }
        holdsRetrySlot = true;
        attempt++;
        cluster.retries.increment();
        return true;
    }

    /** Gives the retry slot back (the retry's attempt ended). */
    public void releaseRetrySlot() {
        if (holdsRetrySlot) {
            holdsRetrySlot = false;
            cluster.breaker().retryDone();
        }
    }

    /**
     * Ends the exchange: releases the replay buffer and the retry slot, cancels a pending back-off.
     * {@code success}: the request was answered by an upstream (counted when it took retries).
     */
    public void end(boolean success) {
        if (backoff != null) {
            backoff.cancel();
            backoff = null;
        }
        if (success && attempt > 1 && cluster != null) {
            cluster.retrySuccess.increment();
        }
        releaseRetrySlot();
        releaseReplay();
        for (int i = 0; i < triedCount; i++) {
            tried[i] = null;
        }
        triedCount = 0;
        attempt = 1;
        policy = null;
        cluster = null;
    }

    private void releaseReplay() {
        ByteBuf b;
        while ((b = replay.poll()) != null) {
            b.release();
        }
        memory.free(replayBytes);
        replayBytes = 0;
    }
}
