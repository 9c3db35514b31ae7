package io.sluice.server.bolt;

import io.netty.util.concurrent.ScheduledFuture;
import io.sluice.codec.bolt.BoltFraming;
import io.sluice.core.cluster.Host;
import io.sluice.lb.ClusterBalancer;

/**
 * One two-way request in flight on an upstream connection, keyed there by its upstream id: who
 * asked (downstream handler, original id, framing), where it went, and its timeout. It is its own
 * timeout task, so tracking a request costs one object and one scheduled task. Event loop only.
 */
final class Pending implements Runnable {

    final BoltProxyHandler owner;
    final int originalId;
    final BoltFraming framing;
    final long startNanos;
    final long timeoutNanos;
    final Host host;
    final ClusterBalancer cluster;
    /** "service#method" for the access log (null when it is off). */
    String target;
    /** The route it took (null: the default cluster), for its meters. */
    io.sluice.server.route.Route route;
    BoltUpstreamConnection connection;
    int upstreamId;
    ScheduledFuture<?> timer;

    Pending(BoltProxyHandler owner, int originalId, BoltFraming framing, long startNanos, long timeoutNanos,
            Host host, ClusterBalancer cluster) {
        this.owner = owner;
        this.originalId = originalId;
        this.framing = framing;
        this.startNanos = startNanos;
        this.timeoutNanos = timeoutNanos;
        this.host = host;
        this.cluster = cluster;
    }

    /** The timeout fired. */
    @Override
    public void run() {
        timer = null;
        connection.onTimeout(this);
    }

    void cancelTimer() {
        if (timer != null) {
            timer.cancel(false);
            timer = null;
        }
    }
}
