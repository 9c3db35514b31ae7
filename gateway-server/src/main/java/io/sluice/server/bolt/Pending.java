package io.sluice.server.bolt;

import io.sluice.codec.bolt.BoltFraming;
import io.sluice.core.cluster.Host;
import io.sluice.lb.ClusterBalancer;
import io.sluice.codec.bolt.BoltFrame;
import io.sluice.server.policy.ClusterPolicies;
import io.sluice.server.policy.retry.RetryPolicy;
import io.sluice.server.route.Route;

/**
 * One two-way request in flight on an upstream connection, keyed there by its upstream id: who
 * asked (downstream handler, original id, framing), where it went, and when it times out. It is
 * also the node of its connection's deadline list ({@link #prev}/{@link #next}), so tracking a
 * request allocates nothing: the connection recycles its entries ({@link BoltUpstreamConnection})
 * once the owner has been told the outcome. Owners must not keep a reference after
 * {@link PendingListener#onResponse} / {@link PendingListener#onFailed} return. Event loop only.
 */
final class Pending {

    PendingListener owner;
    int originalId;
    BoltFraming framing;
    long startNanos;
    long timeoutNanos;
    /** {@code startNanos + timeoutNanos}, on the gateway's ticker. */
    long deadlineNanos;
    Host host;
    ClusterBalancer cluster;
    /** "service#method" for the access log (null when it is off). */
    String target;
    /** SOFATracer trace id for the access log, or null. */
    String traceId;
    /** The route it took (null: the default cluster), for its meters. */
    Route route;
    // ---- resilience (see BoltRequest)
    ClusterPolicies policies;
    RetryPolicy retryPolicy;
    BoltFrame replay;
    int attempt;
    long overallDeadlineNanos;
    boolean retrySlot;
    int upstreamId;
    /** Which deadline list of the connection holds it (-1: none). */
    int list = -1;
    Pending prev;
    Pending next;

    /** Fills this entry for request {@code r}, sent with {@code originalId} in {@code framing}. */
    void set(BoltRequest r, int originalId, BoltFraming framing) {
        this.owner = r.owner;
        this.route = r.route;
        this.originalId = originalId;
        this.framing = framing;
        this.startNanos = r.startNanos;
        this.timeoutNanos = r.timeoutNanos;
        this.deadlineNanos = r.startNanos + r.timeoutNanos;
        this.host = r.host;
        this.cluster = r.cluster;
        this.target = r.target;
        this.traceId = r.traceId;
        this.policies = r.policies;
        this.retryPolicy = r.retryPolicy;
        this.replay = r.replay;
        this.attempt = r.attempt;
        this.overallDeadlineNanos = r.overallDeadlineNanos;
        this.retrySlot = r.retrySlot;
    }

    /** Forgets everything it points to, so a recycled entry keeps nothing alive. */
    void clear() {
        owner = null;
        framing = null;
        host = null;
        cluster = null;
        target = null;
        traceId = null;
        route = null;
        policies = null;
        retryPolicy = null;
        if (replay != null) {
            replay.release(); // the owner did not take it (it always does; a safety net against leaks)
            replay = null;
        }
        prev = null;
        next = null;
        list = -1;
    }
}
