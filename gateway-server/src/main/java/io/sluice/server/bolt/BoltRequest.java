package io.sluice.server.bolt;

import io.sluice.core.cluster.Host;
import io.sluice.lb.ClusterBalancer;
import io.sluice.codec.bolt.BoltFrame;
import io.sluice.server.policy.ClusterPolicies;
import io.sluice.server.policy.retry.RetryPolicy;
import io.sluice.server.route.Route;

/**
 * What the downstream side tells an upstream connection about a two-way request it sends
 * ({@link BoltUpstreamConnection#send}): who to tell how it ends, when it started and may take,
 * where it goes, and what to report. One instance per downstream connection, refilled per request;
 * the upstream connection copies it into its {@link Pending} entry, so it may be reused at once.
 * Event loop only.
 */
final class BoltRequest {

    final PendingListener owner;
    long startNanos;
    /** The request's own timeout capped by the route's (or the default cluster's). */
    long timeoutNanos;
    Host host;
    ClusterBalancer cluster;
    /** "service#method" for the access log (null when it is off). */
    String target;
    /** SOFATracer trace id for the access log, or null. */
    String traceId;
    /** The route it took (null: the default cluster), for its meters. */
    Route route;
    // ---- resilience
    /** The cluster's policies; the request holds a slot of its max_requests breaker. */
    ClusterPolicies policies;
    /** The route's retry policy, or null. */
    RetryPolicy retryPolicy;
    /** A retained duplicate of the request frame to replay on a retry (the pending entry owns it), or null. */
    BoltFrame replay;
    /** 1 on the first try. */
    int attempt;
    /** The request's overall deadline over all attempts. */
    long overallDeadlineNanos;
    /** A retry: send under the client's request id {@link #originalId} (the kept frame carries an upstream id by now). */
    boolean hasOriginalId;
    int originalId;
    /** The retry holds a slot of the retry budget. */
    boolean retrySlot;

    BoltRequest(PendingListener owner) {
        this.owner = owner;
    }
}
