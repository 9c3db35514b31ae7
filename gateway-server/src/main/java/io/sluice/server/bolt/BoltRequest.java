package io.sluice.server.bolt;

import io.sluice.core.cluster.Host;
import io.sluice.lb.ClusterBalancer;
import io.sluice.server.policy.breaker.CircuitBreaker;
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
    /** The route it took (null: the default cluster), for its meters. */
    Route route;
    /** The cluster's breaker whose request slot the request holds (resilience). */
    CircuitBreaker breaker;

    BoltRequest(PendingListener owner) {
        this.owner = owner;
    }
}
